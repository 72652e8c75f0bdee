import Foundation

/// Puts objects into a blob store on up to `jobs` threads of its own while the caller reads the
/// next ones: for a bucket, where each put waits for a round trip, many are in flight at once.
///
/// At most `2 * jobs` objects, of at most `maxBytes` together (a larger one goes alone), are held at
/// once; `put` waits while the window is full. Two puts of one name never overlap: the second waits
/// for the first, so the last one handed over is the one that stays, as when they run one by one.
/// Each outcome, including the error `BlobStore.put` threw, goes to `completion` with the label it
/// was handed over with, one at a time (under the window's lock); an error `completion` throws
/// stops the window: puts not yet started are dropped, the outcomes of those still running are
/// not reported, and `put` and `finish` throw it.
final class BlobPutWindow<Label>: @unchecked Sendable {
    typealias Completion = (_ label: Label, _ metadata: BlobMetadata, _ outcome: Result<BlobPutOutcome, any Error>) throws -> Void

    private struct Put {
        var label: Label
        var content: [UInt8]
        var metadata: BlobMetadata
        var replacing: Bool
    }

    private let store: any BlobStore
    private let jobs: Int
    private let maxBytes: Int
    private let completion: Completion
    private let condition = NSCondition()
    private var waiting: [Put] = []
    /// The first put in `waiting` no worker has taken.
    private var next = 0
    private var held = 0
    private var heldBytes = 0
    private var namesHeld: Set<String> = []
    private var workers = 0
    private var idle = 0
    private var closed = false
    private var failure: (any Error)?

    init(store: any BlobStore, jobs: Int, maxBytes: Int, completion: @escaping Completion) {
        precondition(jobs >= 1 && maxBytes >= 0)
        self.store = store
        self.jobs = jobs
        self.maxBytes = maxBytes
        self.completion = completion
    }

    /// Hands `content` to a worker, once the window has room and no put of its name is held.
    func put(_ content: [UInt8], metadata: BlobMetadata, replacing: Bool, label: Label) throws {
        condition.lock()
        defer { condition.unlock() }
        while failure == nil,
            namesHeld.contains(metadata.name) || (held > 0 && (held >= 2 * jobs || heldBytes + content.count > maxBytes))
        {
            condition.wait()
        }
        if let failure { throw failure }
        waiting.append(Put(label: label, content: content, metadata: metadata, replacing: replacing))
        held += 1
        heldBytes += content.count
        namesHeld.insert(metadata.name)
        if idle == 0, workers < jobs {
            workers += 1
            Thread.detachNewThread { self.work() }
        }
        condition.broadcast()
    }

    /// Runs `body`, a put of `metadata.name` on the caller's thread (an object streamed, not held),
    /// once no put of that name is held, and hands its outcome to `completion` as a worker does.
    func putHere(metadata: BlobMetadata, label: Label, _ body: () throws -> BlobPutOutcome) throws {
        condition.lock()
        while failure == nil, namesHeld.contains(metadata.name) { condition.wait() }
        if let failure {
            condition.unlock()
            throw failure
        }
        condition.unlock()
        let outcome = Result { try body() }
        condition.lock()
        defer { condition.unlock() }
        complete(label: label, metadata: metadata, outcome: outcome)
        if let failure { throw failure }
    }

    /// Waits for every put handed over; throws what stopped the window.
    func finish() throws {
        condition.lock()
        defer { condition.unlock() }
        closed = true
        condition.broadcast()
        while workers > 0 { condition.wait() }
        if let failure { throw failure }
    }

    /// Drops the puts not yet started and waits for the others (when the caller fails).
    func stop(_ error: any Error) {
        condition.lock()
        if failure == nil { failure = error }
        condition.unlock()
        _ = try? finish()
    }

    private func work() {
        condition.lock()
        while true {
            while next == waiting.count, !closed, failure == nil {
                idle += 1
                condition.wait()
                idle -= 1
            }
            guard failure == nil, next < waiting.count else { break }
            let put = waiting[next]
            waiting[next].content = []
            next += 1
            if next == waiting.count || next >= 1024 {
                waiting.removeFirst(next)
                next = 0
            }
            condition.unlock()
            let outcome = Result { try put.content.withUnsafeBytes { try store.put($0, metadata: put.metadata, replacing: put.replacing) } }
            condition.lock()
            complete(label: put.label, metadata: put.metadata, outcome: outcome)
            held -= 1
            heldBytes -= put.content.count
            namesHeld.remove(put.metadata.name)
            condition.broadcast()
        }
        workers -= 1
        condition.broadcast()
        condition.unlock()
    }

    /// Under the lock.
    private func complete(label: Label, metadata: BlobMetadata, outcome: Result<BlobPutOutcome, any Error>) {
        guard failure == nil else { return }
        do {
            try completion(label, metadata, outcome)
        } catch {
            failure = error
        }
    }
}
