import Foundation
import StrataLock

/// The continuations of a fetched results controller's ``FetchedResultsController/differences()`` streams,
/// shared with their termination handlers (which may run on any thread).
final class DifferenceStreams: Sendable {
    private let continuations = Lock<[UUID: AsyncStream<FetchedResultsDifference>.Continuation]>([:])
    /// The snapshot of the last difference yielded (read and written on the controller's thread only).
    nonisolated(unsafe) private(set) var lastSnapshot: FetchedResultsSnapshot?

    func makeStream() -> AsyncStream<FetchedResultsDifference> {
        let id = UUID()
        let (stream, continuation) = AsyncStream<FetchedResultsDifference>.makeStream(bufferingPolicy: .unbounded)
        continuations.withLock { $0[id] = continuation }
        continuation.onTermination = { [weak self] _ in self?.continuations.withLock { _ = $0.removeValue(forKey: id) }
        }
        return stream
    }

    func yield(_ difference: FetchedResultsDifference) {
        lastSnapshot = difference.snapshot
        for continuation in continuations.withLock({ Array($0.values) }) { continuation.yield(difference) }
    }

    func finishAll() {
        for continuation in continuations.withLock({ Array($0.values) }) { continuation.finish() }
    }
}
