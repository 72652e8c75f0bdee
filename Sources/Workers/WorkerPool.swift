import Foundation

/// A fixed set of threads running submitted jobs in submission order, with tickets to wait for them.
///
/// With no threads, `submit` runs the job on the caller before returning, so code written against the
/// pool works unchanged (and gives the same results) on one thread. The threads hold the pool: call
/// `stop()` when done with it.
public final class WorkerPool: @unchecked Sendable {
    /// A submitted job; done once the job returned.
    public final class Ticket: @unchecked Sendable {
        fileprivate var done = false
    }

    private let condition = NSCondition()
    private var queue: [(job: @Sendable () -> Void, ticket: Ticket)] = []
    private var head = 0
    private var stopping = false
    private var running = 0
    /// The number of worker threads.
    public let threads: Int

    /// Starts `threads` worker threads (0 runs every job on the submitting thread).
    public init(threads: Int) {
        self.threads = threads
        for index in 0..<threads {
            let thread = Thread { [self] in work() }
            thread.name = "dumpkit-worker-\(index)"
            running += 1
            thread.start()
        }
    }

    /// Runs `job` on a worker; the ticket tells when it is done.
    @discardableResult
    public func submit(_ job: @escaping @Sendable () -> Void) -> Ticket {
        let ticket = Ticket()
        if threads == 0 {
            job()
            ticket.done = true
            return ticket
        }
        condition.withLock {
            queue.append((job, ticket))
            condition.broadcast()
        }
        return ticket
    }

    /// Waits until the job of `ticket` is done.
    public func wait(for ticket: Ticket) {
        condition.withLock {
            while !ticket.done { condition.wait() }
        }
    }

    /// Lets the workers finish the jobs already submitted, then ends them. Submit nothing afterwards.
    public func stop() {
        condition.withLock {
            stopping = true
            condition.broadcast()
            while running > 0 { condition.wait() }
        }
    }

    /// A worker's loop: the oldest job first, until `stop`.
    private func work() {
        condition.lock()
        while true {
            if head < queue.count {
                let (job, ticket) = queue[head]
                queue[head] = ({ @Sendable in }, ticket)
                head += 1
                if head > 1024 && head * 2 > queue.count {
                    queue.removeFirst(head)
                    head = 0
                }
                condition.unlock()
                job()
                condition.lock()
                ticket.done = true
                condition.broadcast()
            } else if stopping {
                break
            } else {
                condition.wait()
            }
        }
        running -= 1
        condition.broadcast()
        condition.unlock()
    }
}
