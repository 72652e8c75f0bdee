import Foundation

/// The SVG treemap of `stats --html`: one `<rect class="tm">` per path pattern, its area its bytes,
/// nested inside the pattern above it; the space a parent keeps around its children is its keys,
/// punctuation and whitespace. The inline base64 files of a pattern are a red `<rect class="tm
/// files">` inside it. At most `limit` rectangles, level by level, the largest first; rectangles
/// too small to see are left out.
struct PatternTreemap {
    private let patterns: [DumpStats.PatternStats]
    /// Children of each pattern (indices into `patterns`), from the patterns' text.
    private var children: [[Int]]
    private let limit: Int
    private var drawn = 0
    /// The `<rect>` and `<text>` elements.
    private(set) var output = ""

    /// Smallest side of a rectangle that is drawn, and of one whose children are drawn inside it.
    private static let minimumSide = 2.0
    private static let minimumParentSide = 12.0

    init(patterns: [DumpStats.PatternStats], limit: Int) {
        self.patterns = patterns
        self.limit = limit
        children = Array(repeating: [], count: patterns.count)
        var index: [String: Int] = [:]
        for (i, p) in patterns.enumerated() {
            index[p.pattern] = i
            guard p.pattern != "/", let slash = p.pattern.lastIndex(of: "/") else { continue }
            let parent = slash == p.pattern.startIndex ? "/" : String(p.pattern[..<slash])
            if let up = index[parent] { children[up].append(i) }
        }
    }

    /// A pattern whose children are still to be laid out inside `rect`.
    private struct Pending {
        var node: Int
        var rect: Treemap.Rect
        var depth: Int
        var hue: Double?
    }

    /// Draws the root's children (or the root alone, for a dump that is one value) into `rect`,
    /// level by level, so that the limit leaves out the deepest and smallest patterns.
    mutating func draw(in rect: Treemap.Rect) {
        guard let root = patterns.indices.first(where: { patterns[$0].pattern == "/" }) else { return }
        var queue: [Pending] = []
        if children[root].isEmpty {
            if let inner = drawNode(root, in: rect, depth: 0, hue: 210) { queue.append(inner) }
        } else {
            queue.append(Pending(node: root, rect: rect, depth: 0, hue: nil))
        }
        var next = 0
        while next < queue.count, drawn < limit {
            let parent = queue[next]
            next += 1
            let kids = children[parent.node].sorted {
                patterns[$0].bytes != patterns[$1].bytes ? patterns[$0].bytes > patterns[$1].bytes : $0 < $1
            }
            let p = patterns[parent.node]
            let own = max(0, p.bytes - p.fileBytes - kids.reduce(Int64(0)) { $0 + patterns[$1].bytes })
            let rects = Treemap.layout(kids.map { Double(patterns[$0].bytes) } + [Double(p.fileBytes), Double(own)], in: parent.rect)
            let files = rects[kids.count]
            if p.files > 0, drawn < limit, files.width >= Self.minimumSide, files.height >= Self.minimumSide {
                drawn += 1
                output += rectTag(files, fill: "#e4572e", class: "tm files", pattern: p.pattern)
                output +=
                    "<title>\(StatsHTMLReport.escape(p.pattern)): \(p.files) inline base64 files, \(ProgressMeter.format(bytes: p.fileBytes))</title></rect>\n"
            }
            for (n, kid) in kids.enumerated() {
                let r = rects[n]
                guard drawn < limit, r.width >= Self.minimumSide, r.height >= Self.minimumSide else { continue }
                let hue = parent.hue ?? Double((n * 67 + 200) % 360)
                if let inner = drawNode(kid, in: r, depth: parent.depth + 1, hue: hue) { queue.append(inner) }
            }
        }
    }

    /// Draws one pattern; returns the space for its children, if it has any and room for them.
    private mutating func drawNode(_ node: Int, in r: Treemap.Rect, depth: Int, hue: Double) -> Pending? {
        let p = patterns[node]
        drawn += 1
        let fill = String(format: "hsl(%.0f,45%%,%.0f%%)", hue, max(50.0, 86.0 - Double(depth) * 7.0))
        let label = p.pattern.split(separator: "/").last.map(String.init) ?? "/"
        output += rectTag(r, fill: fill, class: "tm", pattern: p.pattern) + "<title>"
        output += StatsHTMLReport.escape(p.pattern) + ": " + ProgressMeter.format(bytes: p.bytes) + ", \(p.count) values"
        if p.files > 0 { output += ", \(p.files) base64 files (\(ProgressMeter.format(bytes: p.fileBytes)))" }
        output += "</title></rect>\n"
        let hasHeader = r.width >= 40 && r.height >= 16
        if hasHeader {
            let fits = Int((r.width - 6) / 6.2)
            let text = label.count > fits ? String(label.prefix(max(1, fits - 1))) + "…" : label
            output += String(format: "<text x=\"%.1f\" y=\"%.1f\">", r.x + 3, r.y + 12) + StatsHTMLReport.escape(text) + "</text>\n"
        }
        guard !children[node].isEmpty || p.files > 0, r.width >= Self.minimumParentSide, r.height >= Self.minimumParentSide else {
            return nil
        }
        let top = hasHeader ? 15.0 : 2.0
        let inner = Treemap.Rect(x: r.x + 2, y: r.y + top, width: r.width - 4, height: r.height - top - 2)
        guard inner.width > 0, inner.height > 0 else { return nil }
        return Pending(node: node, rect: inner, depth: depth, hue: hue)
    }

    /// An opening `<rect>` tag.
    private func rectTag(_ r: Treemap.Rect, fill: String, class name: String, pattern: String) -> String {
        "<rect class=\"\(name)\"" + String(format: " x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"", r.x, r.y, r.width, r.height)
            + " fill=\"\(fill)\" data-pattern=\"\(StatsHTMLReport.escape(pattern))\">"
    }
}
