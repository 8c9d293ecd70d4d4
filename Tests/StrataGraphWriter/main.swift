// StrataGraphWriter STORE_DIR NAME COUNT
//
// The other process of Tests/StrataTests/RemoteChangeTests.swift: opens the Strata store in STORE_DIR with the
// ``RemoteNotes`` model (persistent history on), then COUNT times adds one to the counter of the note named NAME and
// saves, as author "writer"; prints `saved <counter>` after each save. Exit codes: 0 done, 2 any error (described
// on stderr), 64 bad arguments.

import Foundation
import Strata

let arguments = CommandLine.arguments
guard arguments.count == 4, let count = Int(arguments[3]) else {
    FileHandle.standardError.write(Data("usage: StrataGraphWriter STORE_DIR NAME COUNT\n".utf8))
    exit(64)
}
do {
    let coordinator = PersistentStoreCoordinator(model: RemoteNotes.model)
    let store = try coordinator.addPersistentStore(
        .strata(directory: arguments[1], configuration: RemoteNotes.configuration()))
    let context = ManagedObjectContext(coordinator: coordinator)
    context.transactionAuthor = "writer"
    for _ in 0..<count {
        guard let note = try RemoteNotes.note(named: arguments[2], in: context) else {
            throw ObjectGraphError.unknownKey(entity: "RemoteNote", key: arguments[2])
        }
        let counter = (try note.value(forKey: "counter") as? Int64 ?? 0) + 1
        try note.setValue(counter, forKey: "counter")
        try context.save()
        print("saved \(counter)")
    }
    try store.close()
} catch {
    FileHandle.standardError.write(Data("error \(error)\n".utf8))
    exit(2)
}
