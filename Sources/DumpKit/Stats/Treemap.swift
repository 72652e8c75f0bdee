/// Squarified treemap layout (Bruls, Huizing, van Wijk): rectangles whose areas are proportional to
/// their weights, as close to squares as a row-by-row greedy layout gets them.
enum Treemap {
    struct Rect: Equatable {
        var x: Double
        var y: Double
        var width: Double
        var height: Double
    }

    /// The rectangles of `weights` filling `rect`, laid out in the order given (largest first makes
    /// the squarest rectangles); a weight of 0 gets an empty rectangle.
    static func layout(_ weights: [Double], in rect: Rect) -> [Rect] {
        var out = [Rect](repeating: Rect(x: rect.x, y: rect.y, width: 0, height: 0), count: weights.count)
        let total = weights.reduce(0, +)
        guard total > 0, rect.width > 0, rect.height > 0 else { return out }
        let scale = rect.width * rect.height / total
        let order = weights.indices.filter { weights[$0] > 0 }
        var free = rect
        var row: [Int] = []
        var rowArea = 0.0
        for i in order {
            let area = weights[i] * scale
            let side = min(free.width, free.height)
            if row.isEmpty
                || worst(row.map { weights[$0] * scale } + [area], side: side) <= worst(row.map { weights[$0] * scale }, side: side)
            {
                row.append(i)
                rowArea += area
            } else {
                place(row, area: rowArea, scale: scale, weights: weights, in: &free, into: &out)
                row = [i]
                rowArea = area
            }
        }
        if !row.isEmpty { place(row, area: rowArea, scale: scale, weights: weights, in: &free, into: &out) }
        return out
    }

    /// The worst aspect ratio of a row of `areas` along a side of length `side`.
    private static func worst(_ areas: [Double], side: Double) -> Double {
        let sum = areas.reduce(0, +)
        guard sum > 0, side > 0, let big = areas.max(), let small = areas.min() else { return .infinity }
        let s2 = side * side
        return max(s2 * big / (sum * sum), sum * sum / (s2 * small))
    }

    /// Lays `row` out along the shorter side of `free` and removes the strip it takes.
    private static func place(_ row: [Int], area: Double, scale: Double, weights: [Double], in free: inout Rect, into out: inout [Rect]) {
        if free.width >= free.height {
            let w = free.height > 0 ? min(free.width, area / free.height) : 0
            var y = free.y
            for i in row {
                let h = w > 0 ? weights[i] * scale / w : 0
                out[i] = Rect(x: free.x, y: y, width: w, height: h)
                y += h
            }
            free.x += w
            free.width -= w
        } else {
            let h = free.width > 0 ? min(free.height, area / free.width) : 0
            var x = free.x
            for i in row {
                let w = h > 0 ? weights[i] * scale / h : 0
                out[i] = Rect(x: x, y: free.y, width: w, height: h)
                x += w
            }
            free.y += h
            free.height -= h
        }
    }
}
