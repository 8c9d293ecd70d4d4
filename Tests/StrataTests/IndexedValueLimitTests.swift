import Foundation
import Strata
import Testing

/// An indexed attribute's value must fit the engine's index pages: a longer one is refused at save with an
/// error naming the attribute, and nothing is written.
@Suite struct IndexedValueLimitTests {
    static let model = try! ManagedObjectModel(entities: [
        Entity("LimitNote") {
            Attribute("title", .string).indexed()
            Attribute("body", .string)
        }
    ])

    @Test func aValueTooLongForItsIndexIsATypedErrorAndTheStoreIsUntouched() throws {
        let stack = try TestStack(.strata, model: Self.model)
        let context = stack.context()
        let note = ManagedObject(entity: stack.entity("LimitNote"), insertInto: context)
        try note.setValue(String(repeating: "x", count: 5_000), forKey: "title")
        #expect {
            try context.save()
        } throws: { error in
            guard case ObjectGraphError.valueTooLongForIndex(let entity, let key, let length, let limit) = error else {
                return false
            }
            return entity == "LimitNote" && key == "title" && length > limit && limit == 998
        }
        #expect(note.isInserted)
        #expect(try stack.storedRows("LimitNote").isEmpty)

        // The same length in an attribute without an index, and a title that fits, save.
        try note.setValue(String(repeating: "x", count: 5_000), forKey: "body")
        try note.setValue(String(repeating: "y", count: 900), forKey: "title")
        try context.save()
        #expect(try stack.storedRows("LimitNote").count == 1)
    }
}

extension IndexedValueLimitTests {
    static let constrained = try! ManagedObjectModel(entities: [
        Entity("LimitUser", uniquenessConstraints: [["handle", "site"]]) {
            Attribute("handle", .string)
            Attribute("site", .string)
        }
    ])

    @Test func aUniquenessConstraintKeyTooLongIsRefusedToo() throws {
        let stack = try TestStack(.strata, model: Self.constrained)
        let context = stack.context()
        let user = ManagedObject(entity: stack.entity("LimitUser"), insertInto: context)
        try user.setValue(String(repeating: "h", count: 600), forKey: "handle")
        try user.setValue(String(repeating: "s", count: 600), forKey: "site")
        #expect {
            try context.save()
        } throws: { error in
            guard case ObjectGraphError.valueTooLongForIndex(_, let key, _, _) = error else { return false }
            return key == "handle+site"
        }
        try user.setValue("example.org", forKey: "site")
        try context.save()
        #expect(try stack.storedRows("LimitUser").count == 1)
    }
}
