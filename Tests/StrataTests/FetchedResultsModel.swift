import Foundation
import Strata

// The fetched results controller's test model: items with a section (`group`), a rank that orders them within
// it (ties allowed: the fetch orders equals by row), and a flag the predicate selects on. Plain ManagedObjects,
// so no class is registered (the registry is process-wide).
enum FetchedResultsModel {
    static let model: ManagedObjectModel = {
        try! ManagedObjectModel(entities: [
            Entity("FRCItem") {
                Attribute("group", .string, optional: true)
                Attribute("rank", .integer64, default: .integer(0))
                Attribute("name", .string, optional: true)
                Attribute("active", .boolean, default: .boolean(true))
            }
        ])
    }()

    /// Active items by group, then rank (equal ranks in row order).
    static func request(sectioned: Bool = true) throws -> FetchRequest<ManagedObject> {
        let request = FetchRequest<ManagedObject>(entityName: "FRCItem")
        request.predicate = try ObjectPredicate(format: "active == YES")
        request.sortKeys = sectioned ? [SortKey("group"), SortKey("rank")] : [SortKey("rank")]
        return request
    }
}

extension TestStack {
    static func fetchedResults(_ kind: StoreKind) throws -> TestStack {
        try TestStack(kind, model: FetchedResultsModel.model)
    }
}

extension ManagedObjectContext {
    @discardableResult
    func makeItem(_ group: String?, rank: Int64, name: String = "", active: Bool = true) throws -> ManagedObject {
        let item = ManagedObject(entity: coordinator.model.entity(named: "FRCItem")!, insertInto: self)
        try item.setValue(group, forKey: "group")
        try item.setValue(rank, forKey: "rank")
        try item.setValue(name, forKey: "name")
        try item.setValue(active, forKey: "active")
        return item
    }
}

/// A delegate that records every callback and replays them on the content it saw last, as a table view would.
final class ChangeRecorder: FetchedResultsControllerDelegate {
    struct Section: Equatable {
        var name: String
        var objects: [ObjectIdentifier]
    }

    enum Callback: Equatable {
        case section(FetchedResultsChangeType, index: Int, name: String)
        case object(FetchedResultsChangeType, name: String, old: IndexPath?, new: IndexPath?)
    }

    private(set) var sections: [Section] = []
    private(set) var contentChanges = 0
    private(set) var differences: [FetchedResultsDifference] = []
    /// The callbacks of the last change, objects named by their `name` attribute.
    private(set) var last: [Callback] = []
    private var willChangeCalls = 0
    private var sectionChanges: [(FetchedResultsChangeType, Int, String)] = []
    private var objectChanges: [(FetchedResultsChangeType, ObjectIdentifier, IndexPath?, IndexPath?)] = []

    /// Starts from a controller's current content.
    func start(from controller: any FetchedResultsControlling) {
        sections = Self.sections(of: controller)
    }

    static func sections(of controller: any FetchedResultsControlling) -> [Section] {
        (controller.sections ?? []).map { Section(name: $0.name, objects: $0.objects.map { ObjectIdentifier($0) }) }
    }

    func controllerWillChangeContent(_ controller: any FetchedResultsControlling) {
        willChangeCalls += 1
        sectionChanges = []
        objectChanges = []
        last = []
    }

    func controller(
        _ controller: any FetchedResultsControlling, didChange sectionInfo: FetchedResultsSectionInfo,
        atSectionIndex sectionIndex: Int, for type: FetchedResultsChangeType
    ) {
        sectionChanges.append((type, sectionIndex, sectionInfo.name))
        last.append(.section(type, index: sectionIndex, name: sectionInfo.name))
    }

    func controller(
        _ controller: any FetchedResultsControlling, didChange anObject: ManagedObject, at indexPath: IndexPath?,
        for type: FetchedResultsChangeType, newIndexPath: IndexPath?
    ) {
        objectChanges.append((type, ObjectIdentifier(anObject), indexPath, newIndexPath))
        let name = (try? anObject.value(forKey: "name")) as? String ?? "?"
        last.append(.object(type, name: name, old: indexPath, new: newIndexPath))
    }

    func controllerDidChangeContent(_ controller: any FetchedResultsControlling) {
        precondition(willChangeCalls == contentChanges + 1, "didChange without willChange")
        contentChanges += 1
        apply()
    }

    func controller(
        _ controller: any FetchedResultsControlling, didChangeContentWith difference: FetchedResultsDifference
    ) {
        differences.append(difference)
    }

    /// Applies the recorded changes as a table view's batch update does: rows then sections out at their old
    /// places, sections then rows in at their new ones; updates must name an object that stays. What cannot be
    /// applied is recorded in `failures` (and the replay gives up on that change).
    private func apply() {
        var sections = self.sections
        func valid(_ path: IndexPath?, in sections: [Section], inserting: Bool = false) -> Bool {
            guard let path, path.section >= 0, path.section < sections.count, path.item >= 0 else { return false }
            return path.item < sections[path.section].objects.count + (inserting ? 1 : 0)
        }
        let outgoing = objectChanges.filter { $0.0 == .delete || $0.0 == .move }.map { $0.2 }
        for path in outgoing.compactMap({ $0 }).sorted(by: >) {
            guard valid(path, in: sections) else { return fail("no row at \(path) to remove") }
            sections[path.section].objects.remove(at: path.item)
        }
        guard outgoing.allSatisfy({ $0 != nil }) else { return fail("a delete or move without its old index path") }
        for (_, index, _) in sectionChanges.filter({ $0.0 == .delete }).sorted(by: { $0.1 > $1.1 }) {
            guard index < sections.count, sections[index].objects.isEmpty else {
                return fail("deleted section \(index) is missing or still holds objects")
            }
            sections.remove(at: index)
        }
        for (_, index, name) in sectionChanges.filter({ $0.0 == .insert }).sorted(by: { $0.1 < $1.1 }) {
            guard index <= sections.count else { return fail("no place for section \(index)") }
            sections.insert(Section(name: name, objects: []), at: index)
        }
        let incoming = objectChanges.filter { $0.0 == .insert || $0.0 == .move }
        guard incoming.allSatisfy({ $0.3 != nil }) else { return fail("an insert or move without its new index path") }
        for (_, object, _, path) in incoming.sorted(by: { $0.3! < $1.3! }) {
            guard valid(path, in: sections, inserting: true) else { return fail("no place for a row at \(path!)") }
            sections[path!.section].objects.insert(object, at: path!.item)
        }
        for (type, object, old, new) in objectChanges where type == .update {
            guard valid(old, in: self.sections), valid(new, in: sections),
                self.sections[old!.section].objects[old!.item] == object,
                sections[new!.section].objects[new!.item] == object
            else { return fail("an update's index paths do not name its object") }
        }
        self.sections = sections
    }

    private(set) var failures: [String] = []

    private func fail(_ message: String) {
        failures.append(message)
    }
}
