import Foundation

/// Runs an async operation from a synchronous caller (the CLI's `run()`) and waits for its result.
/// It blocks the calling thread, so it must never be called from a task of the cooperative pool.
public func runBlocking<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) throws -> T {
    let box = BlockingResult<T>()
    let done = DispatchSemaphore(value: 0)
    Task {
        do {
            box.set(.success(try await operation()))
        } catch {
            box.set(.failure(error))
        }
        done.signal()
    }
    done.wait()
    return try box.get()
}

/// The result handed from the task to the waiting thread.
private final class BlockingResult<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var result: Result<T, any Error>?

    func set(_ value: Result<T, any Error>) { lock.withLock { result = value } }
    func get() throws -> T { try lock.withLock { result! }.get() }
}
