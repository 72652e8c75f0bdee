/// Bytes of object bodies a copy may hold at once, shared by its workers: a worker asks for what
/// an object needs before reading it and gives it back when the object is written, waiting (in
/// order of asking) while others hold too much. So memory stays bounded by the budget, not by the
/// number of jobs times the object size.
actor ByteBudget {
    let total: Int
    private var available: Int
    private var waiting: [(bytes: Int, continuation: CheckedContinuation<Void, Never>)] = []

    init(total: Int) {
        self.total = total
        available = total
    }

    /// Takes `bytes` (at most the whole budget, so one large object can always go alone) and
    /// returns how many were taken, for `release`.
    func acquire(_ bytes: Int) async -> Int {
        let n = min(max(bytes, 0), total)
        if waiting.isEmpty, n <= available {
            available -= n
            return n
        }
        await withCheckedContinuation { waiting.append((n, $0)) }
        return n
    }

    /// Runs `body` holding `bytes` of the budget, given back however it ends.
    nonisolated func holding<T>(_ bytes: Int, _ body: () async throws -> T) async throws -> T {
        let held = await acquire(bytes)
        do {
            let result = try await body()
            await release(held)
            return result
        } catch {
            await release(held)
            throw error
        }
    }

    /// Gives back what `acquire` took, and wakes the waiters that now fit, first come first served.
    func release(_ bytes: Int) {
        available += bytes
        while let first = waiting.first, first.bytes <= available {
            available -= first.bytes
            waiting.removeFirst()
            first.continuation.resume()
        }
    }
}
