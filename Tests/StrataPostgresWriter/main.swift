// StrataPostgresWriter PORT USER DATABASE SCHEMA NAME COUNT [TAG]
//
// The other process of Tests/StrataPostgresTests/PostgresTwoProcessTests.swift: opens the PostgreSQL store in
// SCHEMA (server on 127.0.0.1:PORT) with the ``PostgresNotes`` model (persistent history on), then COUNT times adds
// one to the counter of the note named NAME (and sets its tag to TAG, when given) and saves, as author "writer";
// prints `saved <counter>` after each save.
// Exit codes: 0 done, 2 any error (described on stderr), 64 bad arguments or a build without the trait Postgres.

import Foundation
import Strata

#if Postgres
import StrataPostgres

let arguments = CommandLine.arguments
guard arguments.count == 7 || arguments.count == 8, let port = Int(arguments[1]), let count = Int(arguments[6]) else {
    FileHandle.standardError.write(
        Data("usage: StrataPostgresWriter PORT USER DATABASE SCHEMA NAME COUNT [TAG]\n".utf8))
    exit(64)
}
do {
    let coordinator = PersistentStoreCoordinator(model: PostgresNotes.model)
    let store = try coordinator.addPersistentStore(
        .postgres(
            PostgresNotes.configuration(port: port, user: arguments[2], database: arguments[3], schema: arguments[4])
        ))
    let context = ManagedObjectContext(coordinator: coordinator)
    context.transactionAuthor = "writer"
    for _ in 0..<count {
        guard let note = try PostgresNotes.note(named: arguments[5], in: context) else {
            throw ObjectGraphError.unknownKey(entity: "PGNote", key: arguments[5])
        }
        let counter = (try note.value(forKey: "counter") as? Int64 ?? 0) + 1
        try note.setValue(counter, forKey: "counter")
        if arguments.count == 8 { try note.setValue(arguments[7], forKey: "tag") }
        try context.save()
        print("saved \(counter)")
    }
    try store.close()
} catch {
    FileHandle.standardError.write(Data("error \(error)\n".utf8))
    exit(2)
}
#else
FileHandle.standardError.write(Data("StrataPostgresWriter: built without the package trait Postgres\n".utf8))
exit(64)
#endif
