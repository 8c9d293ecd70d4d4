import Foundation

/// A versioned Core Data model: a `.xcdatamodeld` directory holding one `.xcdatamodel` package per version and a
/// `.xccurrentversion` property list naming the current one (`_XCCurrentVersionName`).
///
/// For example:
///
///     let bundle = try ModelBundle(path: "Library.xcdatamodeld")
///     bundle.versionNames          // ["Library", "Library 2"]
///     bundle.currentVersionName    // "Library 2"
///     let model = try bundle.model(named: "Library")
///
/// ## Topics
/// - ``init(path:)``
/// - ``versionNames``
/// - ``currentVersionName``
/// - ``model(named:)``
public struct ModelBundle: Sendable {
    /// The bundle's directory.
    public let path: String
    /// The name of every version (the package names without `.xcdatamodel`), sorted.
    public let versionNames: [String]
    /// The version `.xccurrentversion` names; when the file is missing, the only version there is.
    public let currentVersionName: String

    /// Reads a bundle's list of versions and its current version.
    ///
    /// - Parameter path: the `.xcdatamodeld` directory.
    /// - Throws: ``ModelFileError/unreadable(path:reason:)``, ``ModelFileError/noCurrentVersion(path:reason:)``.
    public init(path: String) throws(ModelFileError) {
        let entries: [String]
        do { entries = try FileManager.default.contentsOfDirectory(atPath: path) } catch {
            throw .unreadable(path: path, reason: "not a readable .xcdatamodeld directory")
        }
        let suffix = ".xcdatamodel"
        let names = entries.filter { $0.hasSuffix(suffix) }.map { String($0.dropLast(suffix.count)) }
            .sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        guard !names.isEmpty else { throw .noCurrentVersion(path: path, reason: "the bundle holds no .xcdatamodel") }
        let plistPath = URL(fileURLWithPath: path).appendingPathComponent(".xccurrentversion").path
        var current: String
        if let data = FileManager.default.contents(atPath: plistPath) {
            guard
                let plist = try? PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any],
                let name = plist["_XCCurrentVersionName"] as? String
            else {
                throw .noCurrentVersion(path: plistPath, reason: "no _XCCurrentVersionName string in the property list")
            }
            current = name
            if current.hasSuffix(suffix) { current = String(current.dropLast(suffix.count)) }
            guard names.contains(current) else {
                throw .noCurrentVersion(path: plistPath, reason: "the current version \(name) is not in the bundle")
            }
        } else {
            guard names.count == 1 else {
                throw .noCurrentVersion(
                    path: path, reason: "several versions and no .xccurrentversion to say which is current")
            }
            current = names[0]
        }
        self.path = path
        self.versionNames = names
        self.currentVersionName = current
    }

    /// The package of a version.
    func path(ofVersion name: String) -> String {
        URL(fileURLWithPath: path).appendingPathComponent(name + ".xcdatamodel").path
    }

    /// Loads one version of the model.
    ///
    /// - Parameter name: one of ``versionNames``.
    /// - Throws: ``ModelFileError``; ``ModelFileError/noCurrentVersion(path:reason:)`` for an unknown name.
    public func model(named name: String) throws(ModelFileError) -> ManagedObjectModel {
        guard versionNames.contains(name) else {
            throw .noCurrentVersion(path: path, reason: "the bundle has no version \(name)")
        }
        return try ManagedObjectModel(contentsOf: URL(fileURLWithPath: path(ofVersion: name)))
    }
}
