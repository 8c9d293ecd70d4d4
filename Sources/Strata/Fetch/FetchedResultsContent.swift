import Foundation

/// A fetched results controller's content: its objects in order, cut into sections (runs of one section
/// name), and where each object is.
struct FetchedResultsContent {
    struct Section {
        var name: String
        var objects: [ManagedObject]
    }

    private(set) var sections: [Section] = []
    /// Each object's index path.
    private(set) var indexPaths: [ObjectIdentifier: IndexPath] = [:]

    /// No object; with `keepsOneSection` (a controller without a section key path) one empty section.
    init(keepsOneSection: Bool) {
        if keepsOneSection { sections = [Section(name: "", objects: [])] }
    }

    /// The content of `objects`, in order: consecutive objects with one name make a section; without a name
    /// function every object is in one section named "", which stays when empty.
    init(_ objects: [ManagedObject], sectionName: ((ManagedObject) -> String)?) {
        guard let sectionName else {
            sections = [Section(name: "", objects: objects)]
            for (item, object) in objects.enumerated() {
                indexPaths[ObjectIdentifier(object)] = IndexPath(item: item, section: 0)
            }
            return
        }
        for object in objects {
            let name = sectionName(object)
            if sections.last?.name != name { sections.append(Section(name: name, objects: [])) }
            indexPaths[ObjectIdentifier(object)] = IndexPath(
                item: sections[sections.count - 1].objects.count, section: sections.count - 1)
            sections[sections.count - 1].objects.append(object)
        }
    }

    /// Every object, section by section.
    var objects: [ManagedObject] { sections.flatMap(\.objects) }

    /// The content by object ID.
    var snapshot: FetchedResultsSnapshot {
        FetchedResultsSnapshot(
            sections: sections.map { .init(name: $0.name, objectIDs: $0.objects.map(\.objectID)) })
    }
}
