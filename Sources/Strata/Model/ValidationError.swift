/// Why a value failed validation, naming the object and the attribute (key).
///
/// `object` is a ``ValidatedObject``: for the failures of a save, the object's ID (``objectID``, which
/// ``ManagedObjectContext/existingObject(with:)`` turns back into the object, also an inserted one in its
/// context) and its entity; for ``AttributeDescription/validate(_:objectDescription:)`` the description the
/// caller passed. ``key`` names the attribute or relationship (Core Data's `NSValidationKeyErrorKey`).
/// Several failures are reported together as ``multiple(_:)``, which never nests.
///
/// For example:
///
///     do {
///         try attribute.validate(.string(""), objectDescription: "Employee/p1")
///     } catch .tooShort(let object, let key, let length, let limit) {
///         print("\(object).\(key): \(length) < \(limit)")
///     } catch {
///         print(error)
///     }
///
/// ## Topics
///
/// ### Failures
/// - ``missingMandatoryValue(object:key:)``
/// - ``wrongType(object:key:expected:)``
/// - ``valueTooSmall(object:key:value:limit:)``
/// - ``valueTooLarge(object:key:value:limit:)``
/// - ``tooShort(object:key:length:limit:)``
/// - ``tooLong(object:key:length:limit:)``
/// - ``patternMismatch(object:key:pattern:)``
/// - ``multiple(_:)``
/// - ``combining(_:)``
///
/// ### What failed
/// - ``objectID``
/// - ``entityName``
/// - ``key``
/// - ``ValidatedObject``
public enum ValidationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A mandatory (non-optional) attribute is nil.
    case missingMandatoryValue(object: ValidatedObject, key: String)
    /// The value is not of the attribute's type (e.g. a string for an integer attribute).
    case wrongType(object: ValidatedObject, key: String, expected: AttributeType)
    /// The value is below the minimum of a range rule, or of the attribute's integer width.
    case valueTooSmall(object: ValidatedObject, key: String, value: AttributeValue, limit: AttributeValue)
    /// The value is above the maximum of a range rule, or of the attribute's integer width.
    case valueTooLarge(object: ValidatedObject, key: String, value: AttributeValue, limit: AttributeValue)
    /// The string (in characters) or data (in bytes) is shorter than a length rule allows.
    case tooShort(object: ValidatedObject, key: String, length: Int, limit: Int)
    /// The string (in characters) or data (in bytes) is longer than a length rule allows.
    case tooLong(object: ValidatedObject, key: String, length: Int, limit: Int)
    /// The string does not match a regular expression rule.
    case patternMismatch(object: ValidatedObject, key: String, pattern: String)
    /// A to-many relationship holds fewer objects than its minimum count.
    case tooFewObjects(object: ValidatedObject, key: String, count: Int, limit: Int)
    /// A to-many relationship holds more objects than its maximum count.
    case tooManyObjects(object: ValidatedObject, key: String, count: Int, limit: Int)
    /// A deleted object still has objects in a relationship whose delete rule is ``DeleteRule/deny``.
    case deleteDenied(object: ValidatedObject, key: String, count: Int)
    /// Several failures, in the order they were found; never empty, never nested.
    case multiple([ValidationError])

    /// The one error that reports `errors`: nil for none, the error itself for one, and
    /// ``multiple(_:)`` (flattened) for more.
    ///
    /// - Parameter errors: failures, possibly themselves ``multiple(_:)``.
    /// - Returns: the combined error, or nil when `errors` is empty.
    public static func combining(_ errors: [ValidationError]) -> ValidationError? {
        let flat = errors.flatMap(\.errors)
        switch flat.count {
        case 0: return nil
        case 1: return flat[0]
        default: return .multiple(flat)
        }
    }

    /// The single failures this error reports: itself, or the members of ``multiple(_:)``.
    public var errors: [ValidationError] {
        if case .multiple(let errors) = self { return errors.flatMap(\.errors) }
        return [self]
    }

    /// The failing object's ID (Core Data's `NSValidationObjectErrorKey`, as an ID): the first failure's for
    /// ``multiple(_:)``; nil when the error was made from a description only.
    public var objectID: ManagedObjectID? { subject?.objectID }

    /// The failing object's entity name: the first failure's for ``multiple(_:)``.
    public var entityName: String? { subject?.entityName }

    /// The attribute or relationship that failed (Core Data's `NSValidationKeyErrorKey`): the first failure's for
    /// ``multiple(_:)``.
    public var key: String? {
        switch self {
        case .missingMandatoryValue(_, let key), .wrongType(_, let key, _), .valueTooSmall(_, let key, _, _),
            .valueTooLarge(_, let key, _, _), .tooShort(_, let key, _, _), .tooLong(_, let key, _, _),
            .patternMismatch(_, let key, _), .tooFewObjects(_, let key, _, _), .tooManyObjects(_, let key, _, _),
            .deleteDenied(_, let key, _):
            key
        case .multiple(let errors): errors.first?.key
        }
    }

    /// The object the (first) failure names.
    private var subject: ValidatedObject? {
        switch self {
        case .missingMandatoryValue(let object, _), .wrongType(let object, _, _), .valueTooSmall(let object, _, _, _),
            .valueTooLarge(let object, _, _, _), .tooShort(let object, _, _, _), .tooLong(let object, _, _, _),
            .patternMismatch(let object, _, _), .tooFewObjects(let object, _, _, _),
            .tooManyObjects(let object, _, _, _), .deleteDenied(let object, _, _):
            object
        case .multiple(let errors): errors.first?.subject
        }
    }

    /// A sentence naming the object, the key and the failure.
    public var description: String {
        switch self {
        case .missingMandatoryValue(let object, let key): "\(object): \(key) is mandatory but nil"
        case .wrongType(let object, let key, let expected): "\(object): \(key) is not a value of type \(expected)"
        case .valueTooSmall(let object, let key, let value, let limit): "\(object): \(key) = \(value) is below \(limit)"
        case .valueTooLarge(let object, let key, let value, let limit): "\(object): \(key) = \(value) is above \(limit)"
        case .tooShort(let object, let key, let length, let limit):
            "\(object): \(key) has length \(length), below \(limit)"
        case .tooLong(let object, let key, let length, let limit):
            "\(object): \(key) has length \(length), above \(limit)"
        case .patternMismatch(let object, let key, let pattern):
            "\(object): \(key) does not match \(pattern.debugDescription)"
        case .tooFewObjects(let object, let key, let count, let limit):
            "\(object): \(key) holds \(count) objects, fewer than \(limit)"
        case .tooManyObjects(let object, let key, let count, let limit):
            "\(object): \(key) holds \(count) objects, more than \(limit)"
        case .deleteDenied(let object, let key, let count):
            "\(object) cannot be deleted: \(key) still holds \(count) objects and its delete rule is deny"
        case .multiple(let errors): errors.map(\.description).joined(separator: "; ")
        }
    }
}
