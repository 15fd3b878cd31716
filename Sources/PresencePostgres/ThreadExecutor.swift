import Foundation

/// A serial executor that runs every job on one dedicated OS thread, so an actor using it can make
/// blocking libpq calls without holding a thread of Swift's cooperative pool. The thread ends once
/// the executor is released and its queue is empty.
final class ThreadExecutor: SerialExecutor {
    private let queue: JobQueue

    init(name: String) {
        let queue = JobQueue()
        self.queue = queue
        let thread = Thread { queue.run() }
        thread.name = name
        thread.start()
    }

    deinit {
        queue.shutDown()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        queue.append(UnownedJob(job), on: asUnownedSerialExecutor())
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }
}

/// The jobs waiting for the executor's thread. `@unchecked Sendable`: every stored property is
/// read and written only with `condition` locked.
private final class JobQueue: @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [(job: UnownedJob, executor: UnownedSerialExecutor)] = []
    private var head = 0
    private var shuttingDown = false

    func append(_ job: UnownedJob, on executor: UnownedSerialExecutor) {
        condition.lock()
        jobs.append((job, executor))
        condition.signal()
        condition.unlock()
    }

    func shutDown() {
        condition.lock()
        shuttingDown = true
        condition.signal()
        condition.unlock()
    }

    /// The thread's body: runs jobs in order until shut down and drained. A job's task keeps its
    /// actor, and so the executor, alive while the job waits here.
    func run() {
        while let next = take() {
            next.job.runSynchronously(on: next.executor)
        }
    }

    private func take() -> (job: UnownedJob, executor: UnownedSerialExecutor)? {
        condition.lock()
        defer { condition.unlock() }
        while head == jobs.count {
            if shuttingDown { return nil }
            condition.wait()
        }
        let next = jobs[head]
        head += 1
        if head == jobs.count {
            jobs.removeAll(keepingCapacity: true)
            head = 0
        }
        return next
    }
}
