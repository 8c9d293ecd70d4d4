/// What Core Data keeps on every entity and property besides its shape: free-form user info, the renaming
/// identifier migration matches old names by, and the version hash modifier that forces a new version hash.
///
/// ``Entity``, ``Attribute``, ``Relationship`` and ``FetchedProperty`` share these fields and their modifiers.
///
/// For example:
///
///     Attribute("fullName", .string)
///         .renamingIdentifier("name")            // was called "name" in the previous model version
///         .userInfo(["display": "Full name"])
///         .versionHashModifier("2")              // stored values changed meaning: force a new hash
public protocol ModelElementMetadata {
    /// Free-form key-value pairs for the application (Core Data's `userInfo`); Strata never reads them.
    var userInfo: [String: String] { get set }
    /// The element's name in an earlier model version (Core Data's `renamingIdentifier`), for migration.
    var renamingIdentifier: String? { get set }
    /// A string mixed into the version hash (Core Data's `versionHashModifier`): changing it marks the
    /// element, and so the model, as changed even when its shape did not.
    var versionHashModifier: String? { get set }
}

extension ModelElementMetadata {
    /// Replaces the element's user info.
    public func userInfo(_ userInfo: [String: String]) -> Self {
        var copy = self
        copy.userInfo = userInfo
        return copy
    }

    /// Names the element's name in an earlier model version.
    public func renamingIdentifier(_ identifier: String?) -> Self {
        var copy = self
        copy.renamingIdentifier = identifier
        return copy
    }

    /// Sets the string mixed into the element's version hash.
    public func versionHashModifier(_ modifier: String?) -> Self {
        var copy = self
        copy.versionHashModifier = modifier
        return copy
    }
}
