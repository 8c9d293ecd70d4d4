import Foundation

/// The changes that turn one content of a fetched results controller into the next, as a table view applies
/// them: delete sections and rows at their old index paths (a move's old place too), then insert sections and
/// rows at their new ones. Objects that are not moved keep their order relative to each other, so applying the
/// changes to the old content gives the new one.
///
/// Only `candidates` (objects that changed, or were placed again) can move: the others keep their order by
/// construction. A candidate moves when its section's name changed, when it changed places relative to the
/// objects that are not candidates, or when it is outside the longest run of candidates (between the same two
/// non-candidates) that kept its order.
struct FetchedResultsDiff {
    enum Change {
        case section(FetchedResultsChangeType, index: Int, name: String)
        case object(FetchedResultsChangeType, ManagedObject, old: IndexPath?, new: IndexPath?)
    }

    private(set) var changes: [Change] = []

    /// - Parameters:
    ///   - old: the content before.
    ///   - new: the content after.
    ///   - candidates: the objects that may have moved.
    ///   - updated: the objects to report as updated when they stay in place.
    init(
        from old: FetchedResultsContent, to new: FetchedResultsContent, candidates: Set<ObjectIdentifier>,
        updated: Set<ObjectIdentifier>
    ) {
        let oldNames = Set(old.sections.map(\.name))
        let newNames = Set(new.sections.map(\.name))
        for (index, section) in old.sections.enumerated() where !newNames.contains(section.name) {
            changes.append(.section(.delete, index: index, name: section.name))
        }
        for (index, section) in new.sections.enumerated() where !oldNames.contains(section.name) {
            changes.append(.section(.insert, index: index, name: section.name))
        }

        let oldObjects = old.objects
        let newObjects = new.objects
        let moved = Self.moves(
            old: oldObjects, new: newObjects, oldContent: old, newContent: new, candidates: candidates)
        var inserts: [Change] = []
        var moves: [Change] = []
        var updates: [Change] = []
        for object in oldObjects where new.indexPaths[ObjectIdentifier(object)] == nil {
            changes.append(.object(.delete, object, old: old.indexPaths[ObjectIdentifier(object)], new: nil))
        }
        for object in newObjects {
            let key = ObjectIdentifier(object)
            let to = new.indexPaths[key]!
            guard let from = old.indexPaths[key] else {
                inserts.append(.object(.insert, object, old: nil, new: to))
                continue
            }
            if moved.contains(key) {
                moves.append(.object(.move, object, old: from, new: to))
            } else if updated.contains(key) {
                updates.append(.object(.update, object, old: from, new: to))
            }
        }
        changes += inserts + moves + updates
    }

    /// The candidates present before and after that must move.
    private static func moves(
        old: [ManagedObject], new: [ManagedObject], oldContent: FetchedResultsContent,
        newContent: FetchedResultsContent, candidates: Set<ObjectIdentifier>
    ) -> Set<ObjectIdentifier> {
        var moved = Set<ObjectIdentifier>()
        var newPosition: [ObjectIdentifier: Int] = [:]
        // Per common object: how many common non-candidates come before it (its gap), before and after.
        var newGap: [ObjectIdentifier: Int] = [:]
        var fixedSeen = 0
        for (position, object) in new.enumerated() {
            let key = ObjectIdentifier(object)
            guard let from = oldContent.indexPaths[key] else { continue }
            newPosition[key] = position
            let to = newContent.indexPaths[key]!
            if oldContent.sections[from.section].name != newContent.sections[to.section].name {
                moved.insert(key)
                continue
            }
            if candidates.contains(key) {
                newGap[key] = fixedSeen
            } else {
                fixedSeen += 1
            }
        }
        // Walk the old order gap by gap; in each, the longest increasing run of new positions stays.
        var gapMembers: [Int: [ObjectIdentifier]] = [:]
        fixedSeen = 0
        for object in old {
            let key = ObjectIdentifier(object)
            guard newPosition[key] != nil, !moved.contains(key) else { continue }
            guard candidates.contains(key) else {
                fixedSeen += 1
                continue
            }
            if newGap[key] == fixedSeen {
                gapMembers[fixedSeen, default: []].append(key)
            } else {
                moved.insert(key)
            }
        }
        for members in gapMembers.values {
            // The one subsequence search ordered relationships use for their positions.
            let staying = OrderedPositions.longestIncreasingRun(members.map { Int64(newPosition[$0]!) })
            for (offset, key) in members.enumerated() where !staying.contains(offset) { moved.insert(key) }
        }
        return moved
    }
}
