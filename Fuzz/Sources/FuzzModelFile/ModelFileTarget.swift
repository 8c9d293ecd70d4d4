import Foundation
import Strata

// FuzzModelFile: its harness lives here rather than in FuzzSupport (which is about the engine): a Core Data
// model file's `contents` XML is an input a user copies from anywhere, so the loader must stop every hostile
// document with a `ModelFileError`.

/// Stops the process on a broken invariant so that libFuzzer records the input (as `fuzzFail` in FuzzSupport).
func fuzzFail(_ message: String, file: StaticString = #fileID, line: UInt = #line) -> Never {
    FileHandle.standardError.write(Data("FUZZ FINDING: \(message)\n".utf8))
    fatalError(message, file: file, line: line)
}

/// FuzzModelFile: arbitrary bytes through `ManagedObjectModel(modelFileContents:)`.
///
/// Checks: nothing traps, hangs or allocates without bound (XML entity declarations are refused, nesting is
/// limited); a failure is a `ModelFileError` (typed throws makes that a compile-time fact) whose line, when it
/// names one, lies within the document; a loaded model is deterministic (the same bytes give the same version
/// hash and description), its warnings name lines within the document, and every relationship is linked to a
/// destination that is an entity of the model.
public func fuzzModelFile(_ data: UnsafeRawBufferPointer) {
    let bytes = Data(data)
    // Lines as XMLParser counts them: a line feed ends one (a lone carriage return may too: allow for both).
    let lines = 1 + bytes.reduce(0) { $0 + ($1 == 0x0A || $1 == 0x0D ? 1 : 0) }
    let model: ManagedObjectModel
    do {
        model = try ManagedObjectModel(modelFileContents: bytes)
    } catch {
        if let line = errorLine(error), !(1...lines + 1).contains(line) {
            fuzzFail("error \(error) names line \(line) of a \(lines)-line document")
        }
        return
    }
    for warning in model.warnings {
        if case .modelFile(_, let line, _) = warning, !(1...lines + 1).contains(line) {
            fuzzFail("warning \(warning) names line \(line) of a \(lines)-line document")
        }
    }
    for entity in model.entities {
        for relationship in entity.relationships {
            let destination = relationship.destinationEntity
            if model.entity(named: destination.name) !== destination {
                fuzzFail("\(entity.name).\(relationship.name) leads to an entity outside the model")
            }
        }
        _ = entity.description
    }
    guard let again = try? ManagedObjectModel(modelFileContents: bytes) else {
        fuzzFail("the same document loaded once and failed the second time")
    }
    if again.versionHash != model.versionHash || again.description != model.description {
        fuzzFail("the same document gave two different models")
    }
}

/// The line an error names, if any.
private func errorLine(_ error: ModelFileError) -> Int? {
    switch error {
    case .malformedXML(let line, _, _), .unsupportedElement(_, let line, _), .missingAttribute(_, _, let line),
        .invalidValue(_, _, _, let line, _):
        line
    case .invalidModel(_, let line): line
    case .unreadable, .noCurrentVersion: nil
    }
}
