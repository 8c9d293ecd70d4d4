import Foundation

@testable import Strata

/// The hand-written model files under Tests/ModelFiles (Xcode's format, written for these tests).
enum ModelFileFixtures {
    /// Tests/ModelFiles.
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("ModelFiles")

    /// The Library bundle (two versions, the second current).
    static var library: URL { directory.appendingPathComponent("Library.xcdatamodeld") }

    /// A file under Tests/ModelFiles/Hostile.
    static func hostile(_ name: String) -> URL {
        directory.appendingPathComponent("Hostile").appendingPathComponent(name)
    }

    /// The model a `contents` document of these entities describes (the `<model>` wrapper added).
    static func model(_ body: String, modelAttributes: String = "") throws(ModelFileError) -> ManagedObjectModel {
        try ManagedObjectModel(modelFileContents: Data(document(body, modelAttributes: modelAttributes).utf8))
    }

    /// A `contents` document around `body`.
    static func document(_ body: String, modelAttributes: String = "") -> String {
        """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" \(modelAttributes)>
        \(body)
        </model>
        """
    }
}
