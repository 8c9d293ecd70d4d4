import ArgumentParser
import Foundation
import Strata

/// `strata generate MODEL --output DIR`: writes a `ManagedObject` subclass per entity of a Core Data model file
/// (``ClassGenerator``), so that the model file stays the single source of the app's model.
struct GenerateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate",
        abstract: "Write Swift ManagedObject subclasses for the entities of a Core Data model file.",
        discussion: """
            MODEL is a .xcdatamodeld bundle (its current version, or --model-version), a .xcdatamodel package or \
            its contents file. Writes one file per entity that names a class (representedClassName; entities \
            that are plain NSManagedObjects get none), with a typed property per attribute, relationship and \
            fetched property, and <Model>Classes.swift, whose register() registers every class for its entity. \
            Existing files of those names in DIR are replaced; nothing else is touched. The code compiles in \
            Swift 6 language mode. Prints the model's warnings (with their lines) to standard error.

            Exit codes: 0 written; 8 the model file cannot be read or is refused (the message names the element \
            and line), or DIR cannot be written; 64 usage error.
            """
    )

    @Argument(help: "The model: a .xcdatamodeld bundle, a .xcdatamodel package or its contents file.")
    var model: String

    @Option(name: .long, help: "The directory to write the Swift files into (created if missing).")
    var output: String

    @Option(
        name: .customLong("model-version"), help: "The version of a .xcdatamodeld bundle to read (default: current).")
    var modelVersion: String?

    @Flag(name: .long, help: "Declare the classes and their properties public (default: internal).")
    var `public` = false

    @Option(name: .long, help: "The name of the registration enum (default: <Model>Classes).")
    var registryName: String?

    func run() throws {
        let loaded: ManagedObjectModel
        var source = URL(fileURLWithPath: model).lastPathComponent
        do {
            if let modelVersion {
                loaded = try ModelBundle(path: model).model(named: modelVersion)
                source += " (version \(modelVersion.debugDescription))"
            } else {
                loaded = try ManagedObjectModel(contentsOf: URL(fileURLWithPath: model))
            }
        } catch {
            fail("\(model): \(error)")
        }
        for warning in loaded.warnings { FileHandle.standardError.write(Data("warning: \(warning)\n".utf8)) }
        let registry = registryName ?? Self.defaultRegistryName(for: model)
        guard ClassGenerator.isIdentifier(registry) else {
            fail("\(registry.debugDescription) is not a Swift identifier")
        }
        let generator = ClassGenerator(model: loaded, source: source, isPublic: `public`, registryName: registry)
        let files: [(name: String, contents: String)]
        do { files = try generator.files() } catch { fail("\(model): \(error)") }
        do {
            try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
            for file in files {
                let url = URL(fileURLWithPath: output).appendingPathComponent(file.name)
                try Data(file.contents.utf8).write(to: url, options: .atomic)
            }
        } catch {
            fail("cannot write to \(output): \(error.localizedDescription)")
        }
        print("wrote \(files.count) files to \(output): \(files.map(\.name).joined(separator: ", "))")
    }

    /// `Library.xcdatamodeld` gives `LibraryClasses`; a `contents` file takes its package's name.
    static func defaultRegistryName(for path: String) -> String {
        var url = URL(fileURLWithPath: path)
        if url.lastPathComponent == "contents" { url.deleteLastPathComponent() }
        let base = url.deletingPathExtension().lastPathComponent
        let cleaned = String(
            base.unicodeScalars.filter { $0 == "_" || $0.properties.isAlphabetic || ("0"..."9").contains($0) })
        let name = (cleaned.first?.isNumber ?? true ? "Model" + cleaned : cleaned) + "Classes"
        return name
    }

    /// Prints `message` to standard error and exits with 8.
    private func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("strata generate: \(message)\n".utf8))
        Self.exit(withError: ExitCode(StoreExitCode.operationalError.rawValue))
    }
}
