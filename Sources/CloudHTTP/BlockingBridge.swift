import Foundation
import Synchronization

/// Runs an async call from a synchronous caller (a `BlobStore` method on a pipeline worker thread)
/// and waits for its result.
///
/// It blocks the calling thread, so it must be called from threads of the caller's own (worker
/// threads, the main thread of the CLI), never from inside a task of Swift's cooperative pool, which
/// the operation itself needs to make progress.
public func runBlocking<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) throws -> T {
    let box = ResultBox<T>()
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

/// Runs blocking work (file I/O, an output's waits for its uploads) on a thread of its own and
/// awaits it, so that it never holds a thread of Swift's cooperative pool: the `runBlocking` calls
/// inside it need that pool to make progress.
public func onOwnThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try work() }) }
        thread.name = "dumpkit-blocking-work"
        thread.start()
    }
}

/// The result handed from the task to the waiting thread.
private final class ResultBox<T: Sendable>: Sendable {
    private let result = Mutex<Result<T, any Error>?>(nil)

    func set(_ value: Result<T, any Error>) {
        result.withLock { $0 = value }
    }

    func get() throws -> T {
        try result.withLock { $0! }.get()
    }
}
