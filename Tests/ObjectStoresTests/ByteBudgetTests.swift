import XCTest

@testable import ObjectStores

final class ByteBudgetTests: XCTestCase {
    struct Failed: Error {}

    func testClampsToTheWholeBudgetAndGivesBackOnErrors() async throws {
        let budget = ByteBudget(total: 10)
        let taken = await budget.acquire(100)
        XCTAssertEqual(taken, 10, "an object larger than the budget goes alone")
        await budget.release(taken)
        do {
            _ = try await budget.holding(10) { () async throws -> Int in throw Failed() }
        } catch is Failed {}
        let again = await budget.acquire(10)
        XCTAssertEqual(again, 10, "what a failed body held was given back")
        await budget.release(again)
    }

    func testWaitersGoWhenEnoughIsGivenBack() async throws {
        let budget = ByteBudget(total: 10)
        let first = await budget.acquire(8)
        let done = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<3 {
                group.addTask {
                    let n = await budget.acquire(5); await budget.release(n); return n
                }
            }
            await budget.release(first)
            return await group.reduce(0, +)
        }
        XCTAssertEqual(done, 15)
        let all = await budget.acquire(10)
        XCTAssertEqual(all, 10, "everything was given back")
    }
}
