import XCTest

@testable import DumpKit

/// `Treemap.layout`: rectangles that tile the space, with areas proportional to their weights.
final class TreemapTests: XCTestCase {
    func testAreasAreProportionalAndTileTheRectangle() {
        let space = Treemap.Rect(x: 10, y: 20, width: 960, height: 540)
        let weights: [Double] = [500, 250, 120, 60, 40, 20, 6, 3, 1, 0]
        let rects = Treemap.layout(weights, in: space)
        XCTAssertEqual(rects.count, weights.count)
        let total = weights.reduce(0, +)
        for (w, r) in zip(weights, rects) {
            XCTAssertEqual(r.width * r.height, w / total * space.width * space.height, accuracy: 0.01)
            XCTAssertGreaterThanOrEqual(r.x, space.x - 1e-9)
            XCTAssertGreaterThanOrEqual(r.y, space.y - 1e-9)
            XCTAssertLessThanOrEqual(r.x + r.width, space.x + space.width + 1e-6)
            XCTAssertLessThanOrEqual(r.y + r.height, space.y + space.height + 1e-6)
        }
        // No two overlap.
        for i in rects.indices where rects[i].width * rects[i].height > 0 {
            for j in rects.indices where j > i && rects[j].width * rects[j].height > 0 {
                let a = rects[i], b = rects[j]
                let overlap =
                    max(0, min(a.x + a.width, b.x + b.width) - max(a.x, b.x)) * max(0, min(a.y + a.height, b.y + b.height) - max(a.y, b.y))
                XCTAssertLessThan(overlap, 1e-6, "\(a) and \(b)")
            }
        }
        // Squarified: the largest rectangles are not slivers.
        XCTAssertLessThan(max(rects[0].width / rects[0].height, rects[0].height / rects[0].width), 3)
    }

    func testNothingToLayOut() {
        let rects = Treemap.layout([0, 0], in: Treemap.Rect(x: 0, y: 0, width: 10, height: 10))
        XCTAssertEqual(rects.map { $0.width * $0.height }, [0, 0])
        XCTAssertEqual(Treemap.layout([], in: Treemap.Rect(x: 0, y: 0, width: 10, height: 10)), [])
    }
}
