import Foundation

/// `dumpkit stats --html`: the statistics as one self-contained page (inline CSS, SVG and a few
/// lines of script; nothing is loaded from anywhere): a treemap of bytes per path pattern, the
/// suggested record patterns, the inline base64 files `extract-blobs` would move out, the largest
/// records, keys the database forbids, and the table of patterns.
///
/// The page is rendered from `DumpStats` alone and bounded whatever the dump's size: at most
/// `maxTableRows` patterns in the table and `maxRectangles` in the treemap (`--json` has them all).
/// The same statistics give the same bytes.
public struct StatsHTMLReport {
    public var stats: DumpStats
    /// Shown in the title and heading: usually the dump's file name.
    public var title: String

    /// Rows of the pattern table, largest patterns kept first when there are more.
    public static let maxTableRows = 2000
    /// Rectangles of the treemap; the smallest are left out first.
    public static let maxRectangles = 1200

    public init(stats: DumpStats, title: String) {
        self.stats = stats
        self.title = title
    }

    /// The page.
    public func render() -> String {
        var html = """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>DumpKit stats: \(escape(title))</title>
            <style>\(Self.css)</style>
            </head>
            <body>
            <h1>DumpKit stats: <code>\(escape(title))</code></h1>

            """
        html += summary()
        html += treemapSection()
        html += recordPatternSection()
        html += filesSection()
        html += largestSection()
        html += forbiddenSection()
        html += patternTable()
        html += """
            <footer>Written by <code>dumpkit stats --html</code> \(DumpKitVersion.string) in one streaming pass. \
            Ids are collapsed into named captures: <code>{id}</code> push IDs, <code>{uid}</code> Auth UIDs, <code>{n}</code> numbers \
            and array positions, <code>{email}</code> e-mail keys, <code>{key}</code> many or same-shaped siblings. \
            Click a column heading to sort.</footer>
            <script>\(Self.script)</script>
            </body>
            </html>

            """
        return html
    }

    // MARK: Sections

    private func summary() -> String {
        let filesShare = percent(stats.base64ImageBytes, of: stats.totalBytes)
        var items = [
            "<li><b>\(bytes(stats.totalBytes))</b> in all, <b>\(stats.patterns.count)</b> path patterns</li>",
            "<li>depth \(stats.maxDepth)" + (stats.maxDepthPointer.isEmpty ? "" : " (at <code>\(escape(stats.maxDepthPointer))</code>)")
                + "</li>",
            "<li>longest key: \(stats.longestKeyBytes) bytes"
                + (stats.longestKeyPointer.isEmpty ? "" : " at <code>\(escape(stats.longestKeyPointer))</code>") + "</li>",
            "<li>inline base64 files: <b>\(stats.base64Images)</b> strings, \(bytes(stats.base64ImageBytes)) (\(filesShare) of the dump)</li>",
        ]
        items.append(
            "<li>keys the Realtime Database forbids: <b>\(stats.forbiddenKeyCount == 0 ? "none" : String(stats.forbiddenKeyCount))</b></li>"
        )
        return "<ul class=\"summary\">\n" + items.joined(separator: "\n") + "\n</ul>\n"
    }

    private func treemapSection() -> String {
        let width = 960.0, height = 540.0
        var svg = PatternTreemap(patterns: stats.patterns, limit: Self.maxRectangles)
        svg.draw(in: Treemap.Rect(x: 0, y: 0, width: width, height: height))
        return """
            <section id="treemap-section">
            <h2>Bytes per path pattern</h2>
            <p class="note">Each rectangle is a pattern, its area its bytes, nested in the pattern above it; the space a \
            pattern leaves around its children is its keys, punctuation and whitespace. <span class="swatch file"></span> Red: \
            inline base64 files, which <code>extract-blobs</code> would move out. Hover for the pattern and its size.</p>
            <svg id="treemap" viewBox="0 0 \(Int(width)) \(Int(height))" role="img" aria-label="treemap of bytes per path pattern">
            \(svg.output)</svg>
            </section>

            """
    }

    private func recordPatternSection() -> String {
        var html = "<section id=\"records-section\">\n<h2>Suggested record patterns</h2>\n"
        if stats.recordPatterns.isEmpty {
            html += "<p>None: no objects keyed by ids. Without <code>--records</code>, records are the root's children.</p>\n"
        } else {
            html += "<ul id=\"record-patterns\">\n"
            for p in stats.recordPatterns { html += "<li><code>\(escape(p))</code></li>\n" }
            html += "</ul>\n<p class=\"note\">Good <code>--records</code> and plan <code>match:</code> choices, e.g. "
            html += "<code>dumpkit convert DUMP -o records.ndjson --records '\(escape(stats.recordPatterns[0]))'</code>.</p>\n"
        }
        return html + "</section>\n"
    }

    private func filesSection() -> String {
        var html = "<section id=\"files-section\">\n<h2>Inline base64 files</h2>\n"
        let withFiles = stats.patterns.filter { $0.files > 0 }.sorted {
            $0.fileBytes != $1.fileBytes ? $0.fileBytes > $1.fileBytes : $0.pattern < $1.pattern
        }
        if withFiles.isEmpty {
            return html + "<p>No string looks like a base64 file: nothing for <code>extract-blobs</code> to move.</p>\n</section>\n"
        }
        html += """
            <p>\(bytes(stats.base64ImageBytes)) of the dump (\(percent(stats.base64ImageBytes, of: stats.totalBytes))) are strings that look like \
            base64 files (data: URIs, or bare base64 of a known file type). <code>dumpkit extract-blobs</code> (or a plan's \
            <code>extract-blobs</code> step) moves them into a bucket folder and leaves a small reference; it keeps files under \
            <code>--min-bytes</code> (1024 decoded bytes by default) inline.</p>
            <table id="files" class="sortable">
            <thead><tr><th>pattern</th><th class="n">files</th><th class="n">bytes</th><th class="n">share of the dump</th></tr></thead>
            <tbody>

            """
        for p in withFiles {
            html += "<tr><td><code>\(escape(p.pattern))</code></td><td class=\"n\">\(p.files)</td>"
            html +=
                "<td class=\"n\" data-v=\"\(p.fileBytes)\">\(bytes(p.fileBytes))</td><td class=\"n\" data-v=\"\(p.fileBytes)\">\(percent(p.fileBytes, of: stats.totalBytes))</td></tr>\n"
        }
        return html + "</tbody>\n</table>\n</section>\n"
    }

    private func largestSection() -> String {
        var html = "<section id=\"largest-section\">\n<h2>Largest records</h2>\n"
        if stats.largestRecords.isEmpty {
            return html + "<p>No record patterns, so no records to rank.</p>\n</section>\n"
        }
        html += "<table id=\"largest\" class=\"sortable\">\n<thead><tr><th>record</th><th class=\"n\">bytes</th></tr></thead>\n<tbody>\n"
        for r in stats.largestRecords {
            html += "<tr><td><code>\(escape(r.pointer))</code></td><td class=\"n\" data-v=\"\(r.bytes)\">\(bytes(r.bytes))</td></tr>\n"
        }
        return html + "</tbody>\n</table>\n</section>\n"
    }

    private func forbiddenSection() -> String {
        var html = "<section id=\"forbidden-section\">\n<h2>Keys the Realtime Database forbids</h2>\n"
        if stats.forbiddenKeyCount == 0 {
            return html + "<p>None: every key is 1-768 bytes without <code>. $ # [ ] /</code> or control characters.</p>\n</section>\n"
        }
        html += "<p>\(stats.forbiddenKeyCount) keys (empty, over 768 bytes, or with <code>. $ # [ ] /</code> or control characters)"
        html += stats.forbiddenKeyCount > stats.forbiddenKeys.count ? "; the first \(stats.forbiddenKeys.count):" : ":"
        html += "</p>\n<ul id=\"forbidden\">\n"
        for k in stats.forbiddenKeys { html += "<li><code>\(escape(k))</code></li>\n" }
        return html + "</ul>\n</section>\n"
    }

    private func patternTable() -> String {
        var shown = stats.patterns
        if shown.count > Self.maxTableRows {
            let kept = Set(shown.indices.sorted { shown[$0].bytes > shown[$1].bytes }.prefix(Self.maxTableRows))
            shown = shown.indices.filter(kept.contains).map { shown[$0] }
        }
        var html = "<section id=\"patterns-section\">\n<h2>Path patterns</h2>\n"
        if shown.count < stats.patterns.count {
            html +=
                "<p class=\"note\">The \(shown.count) largest of \(stats.patterns.count) patterns; <code>dumpkit stats --json</code> lists them all.</p>\n"
        }
        html += """
            <table id="patterns" class="sortable">
            <thead><tr><th>pattern</th><th class="n">count</th><th class="n">bytes</th><th class="n">share</th><th>types</th>\
            <th class="n">base64 files</th></tr></thead>
            <tbody>

            """
        for p in shown {
            let types = p.types.keys.sorted().map { "\($0) \(p.types[$0]!)" }.joined(separator: ", ")
            let share = stats.totalBytes > 0 ? Double(p.bytes) / Double(stats.totalBytes) * 100 : 0
            html += "<tr><td><code>\(escape(p.pattern))</code></td><td class=\"n\">\(p.count)</td>"
            html += "<td class=\"n\" data-v=\"\(p.bytes)\">\(bytes(p.bytes))</td>"
            html +=
                "<td class=\"n\" data-v=\"\(p.bytes)\"><span class=\"bar\" style=\"width:\(String(format: "%.0f", share.rounded(.up)))px\"></span>"
            html += "\(percent(p.bytes, of: stats.totalBytes))</td><td>\(types)</td>"
            html += "<td class=\"n\" data-v=\"\(p.fileBytes)\">\(p.files > 0 ? "\(p.files) (\(bytes(p.fileBytes)))" : "")</td></tr>\n"
        }
        return html + "</tbody>\n</table>\n</section>\n"
    }

    // MARK: Formatting

    private func bytes(_ n: Int64) -> String { ProgressMeter.format(bytes: n) }

    private func percent(_ n: Int64, of total: Int64) -> String {
        total > 0 ? String(format: "%.1f%%", Double(n) / Double(total) * 100) : "0%"
    }

    /// Text for HTML: markup characters as entities, control characters as `\u001B` (keys may hold them).
    static func escape(_ s: String) -> String {
        var out = ""
        out.reserveCapacity(s.utf8.count)
        for u in s.unicodeScalars {
            switch u {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default:
                if u.value < 0x20 || u.value == 0x7F {
                    out +=
                        "\\u" + String(repeating: "0", count: 4 - String(u.value, radix: 16).count)
                        + String(u.value, radix: 16, uppercase: true)
                } else {
                    out.unicodeScalars.append(u)
                }
            }
        }
        return out
    }

    private func escape(_ s: String) -> String { Self.escape(s) }

    private static let css = """
        body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px auto;max-width:1000px;padding:0 16px;color:#1d2330}
        h1{font-size:22px;margin:0 0 8px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #dde1e8;padding-bottom:4px}
        code{font:12.5px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;word-break:break-all}
        .summary{padding-left:18px;margin:8px 0}.note{color:#566072;font-size:13px}
        svg#treemap{width:100%;height:auto;display:block;background:#f4f6f9;border:1px solid #dde1e8}
        svg#treemap rect{stroke:#fff;stroke-width:1}svg#treemap rect:hover{stroke:#1d2330;stroke-width:2}
        svg#treemap text{font:11px system-ui,sans-serif;fill:#1d2330;pointer-events:none}
        .swatch{display:inline-block;width:10px;height:10px;vertical-align:middle}.swatch.file{background:#e4572e}
        table{border-collapse:collapse;width:100%;font-size:13px}th,td{text-align:left;padding:3px 8px;border-bottom:1px solid #eceff3;vertical-align:top}
        th{background:#f4f6f9;cursor:pointer;user-select:none;position:sticky;top:0}th.n,td.n{text-align:right;white-space:nowrap}
        .bar{display:inline-block;height:9px;background:#7a9cc6;margin-right:6px;vertical-align:middle;max-width:100px}
        footer{margin:32px 0 8px;color:#566072;font-size:12px}
        """

    /// Sorts a table by the column whose heading is clicked (numbers by `data-v`), then marks the page ready.
    private static let script = """
        document.querySelectorAll("table.sortable").forEach(function (table) {
          table.querySelectorAll("th").forEach(function (th, column) {
            th.addEventListener("click", function () {
              var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
              var down = th.getAttribute("data-sorted") !== "down";
              rows.sort(function (a, b) {
                var x = a.cells[column], y = b.cells[column];
                var vx = x.getAttribute("data-v"), vy = y.getAttribute("data-v");
                var c = vx !== null && vy !== null ? Number(vx) - Number(vy) : x.textContent.localeCompare(y.textContent);
                return down ? -c : c;
              });
              rows.forEach(function (row) { body.appendChild(row); });
              th.setAttribute("data-sorted", down ? "down" : "up");
            });
          });
        });
        document.body.setAttribute("data-ready", "true");
        """
}
