import Foundation
import Testing

@testable import Strata

/// `AttributeDescription.validate`: optionality, types, integer widths and every rule, with typed errors
/// that name the object and the key.
@Suite struct ValidationTests {
    private static let object: ValidatedObject = "x-coredata://store/Thing/p7"

    /// The attribute `x` of a one-entity model.
    private func attribute(_ definition: Attribute) throws -> AttributeDescription {
        let model = try ManagedObjectModel { Entity("Thing") { definition } }
        return try #require(model.entity(named: "Thing")?.attributesByName[definition.name])
    }

    /// The error `validate` throws for `value`, or nil.
    private func failure(_ attribute: AttributeDescription, _ value: AttributeValue?) -> ValidationError? {
        do {
            try attribute.validate(value, objectDescription: Self.object.description)
            return nil
        } catch {
            return error
        }
    }

    @Test func nilMandatoryValueFailsNamingObjectAndKey() throws {
        let name = try attribute(Attribute("name", .string, optional: false).validated(.length(min: 1, max: nil)))
        #expect(failure(name, nil) == .missingMandatoryValue(object: Self.object, key: "name"))
    }

    @Test func nilOptionalValuePassesEveryRule() throws {
        let name = try attribute(
            Attribute("name", .string).validated(.length(min: 1, max: nil), .regularExpression("a+")))
        #expect(failure(name, nil) == nil)
    }

    @Test func valueOfAnotherTypeFailsAloneAsWrongType() throws {
        let count = try attribute(Attribute("count", .integer32).validated(.range(min: .integer(0), max: nil)))
        #expect(failure(count, .string("3")) == .wrongType(object: Self.object, key: "count", expected: .integer32))
        #expect(failure(count, .double(3)) == .wrongType(object: Self.object, key: "count", expected: .integer32))
        let data = try attribute(Attribute("blob", .binaryData))
        #expect(failure(data, .string("x")) == .wrongType(object: Self.object, key: "blob", expected: .binaryData))
        let any = try attribute(Attribute("scratch", .undefined).transient())
        #expect(failure(any, .string("anything")) == nil)
    }

    @Test func integersOutsideTheirWidthFailAsTooSmallOrTooLarge() throws {
        let small = try attribute(Attribute("small", .integer16))
        #expect(failure(small, .integer(32767)) == nil)
        #expect(failure(small, .integer(-32768)) == nil)
        #expect(
            failure(small, .integer(32768))
                == .valueTooLarge(object: Self.object, key: "small", value: .integer(32768), limit: .integer(32767)))
        #expect(
            failure(small, .integer(-32769))
                == .valueTooSmall(object: Self.object, key: "small", value: .integer(-32769), limit: .integer(-32768)))
        let medium = try attribute(Attribute("medium", .integer32))
        #expect(
            failure(medium, .integer(Int64(Int32.max) + 1))
                == .valueTooLarge(
                    object: Self.object, key: "medium", value: .integer(Int64(Int32.max) + 1),
                    limit: .integer(Int64(Int32.max))))
        let large = try attribute(Attribute("large", .integer64))
        #expect(failure(large, .integer(.min)) == nil)
    }

    @Test func integerRangeIsInclusiveAndNamesTheBrokenLimit() throws {
        let salary = try attribute(
            Attribute("salary", .integer64).validated(.range(min: .integer(0), max: .integer(100))))
        #expect(failure(salary, .integer(0)) == nil)
        #expect(failure(salary, .integer(100)) == nil)
        #expect(
            failure(salary, .integer(-1))
                == .valueTooSmall(object: Self.object, key: "salary", value: .integer(-1), limit: .integer(0)))
        #expect(
            failure(salary, .integer(101))
                == .valueTooLarge(object: Self.object, key: "salary", value: .integer(101), limit: .integer(100)))
    }

    @Test func openEndedRangeChecksOnlyItsBound() throws {
        let atLeast = try attribute(Attribute("n", .integer64).validated(.range(min: .integer(0), max: nil)))
        #expect(failure(atLeast, .integer(.max)) == nil)
        let atMost = try attribute(Attribute("n", .integer64).validated(.range(min: nil, max: .integer(0))))
        #expect(failure(atMost, .integer(.min)) == nil)
        #expect(failure(atMost, .integer(1)) != nil)
    }

    @Test func doubleAndFloatRangesAcceptIntegerAndFloatingLimits() throws {
        let ratio = try attribute(Attribute("ratio", .double).validated(.range(min: .integer(0), max: .float(1))))
        #expect(failure(ratio, .double(0.5)) == nil)
        #expect(
            failure(ratio, .double(1.5))
                == .valueTooLarge(object: Self.object, key: "ratio", value: .double(1.5), limit: .float(1)))
        #expect(failure(ratio, .double(-0.0)) == nil)
        let weight = try attribute(Attribute("weight", .float).validated(.range(min: .double(0.5), max: nil)))
        #expect(
            failure(weight, .float(0.25))
                == .valueTooSmall(object: Self.object, key: "weight", value: .float(0.25), limit: .double(0.5)))
    }

    @Test func notANumberLiesWithinNoRange() throws {
        let ratio = try attribute(Attribute("ratio", .double).validated(.range(min: .double(0), max: .double(1))))
        // NaN is not equal to itself, so the errors are matched by shape.
        let errors = failure(ratio, .double(.nan))?.errors ?? []
        #expect(errors.count == 2)
        if case .valueTooSmall(Self.object, "ratio", .double(let value), .double(0)) = errors.first {
            #expect(value.isNaN)
        } else {
            Issue.record("expected valueTooSmall first, got \(errors)")
        }
        if case .valueTooLarge(Self.object, "ratio", .double(let value), .double(1)) = errors.last {
            #expect(value.isNaN)
        } else {
            Issue.record("expected valueTooLarge last, got \(errors)")
        }
        let price = try attribute(Attribute("price", .decimal).validated(.range(min: .integer(0), max: nil)))
        if case .valueTooSmall(Self.object, "price", .decimal(let value), .integer(0)) = failure(price, .decimal(.nan))
        {
            #expect(value.isNaN)
        } else {
            Issue.record("a NaN price passed its range")
        }
    }

    @Test func decimalRangeComparesExactly() throws {
        let limit = try #require(Decimal(string: "0.1"))
        let price = try attribute(
            Attribute("price", .decimal).validated(.range(min: .decimal(limit), max: .integer(10))))
        #expect(failure(price, .decimal(limit)) == nil)
        #expect(failure(price, .decimal(10)) == nil)
        let below = try #require(Decimal(string: "0.0999999999999999999999999999999999999"))
        #expect(
            failure(price, .decimal(below))
                == .valueTooSmall(object: Self.object, key: "price", value: .decimal(below), limit: .decimal(limit)))
        let above = try #require(Decimal(string: "10.000000000000000000000000000000000001"))
        #expect(
            failure(price, .decimal(above))
                == .valueTooLarge(object: Self.object, key: "price", value: .decimal(above), limit: .integer(10)))
    }

    @Test func dateRangeChecksBothBounds() throws {
        let start = Date(timeIntervalSinceReferenceDate: 0)
        let end = Date(timeIntervalSinceReferenceDate: 1000)
        let when = try attribute(Attribute("when", .date).validated(.range(min: .date(start), max: .date(end))))
        #expect(failure(when, .date(start)) == nil)
        #expect(
            failure(when, .date(end.addingTimeInterval(0.001)))
                == .valueTooLarge(
                    object: Self.object, key: "when", value: .date(end.addingTimeInterval(0.001)), limit: .date(end)))
        #expect(
            failure(when, .date(start.addingTimeInterval(-1)))
                == .valueTooSmall(
                    object: Self.object, key: "when", value: .date(start.addingTimeInterval(-1)), limit: .date(start)))
    }

    @Test func stringLengthCountsCharacters() throws {
        let name = try attribute(Attribute("name", .string).validated(.length(min: 2, max: 3)))
        #expect(failure(name, .string("ab")) == nil)
        // Two characters, many more UTF-8 bytes and UTF-16 code units.
        #expect(failure(name, .string("👨‍👩‍👧é")) == nil)
        #expect(failure(name, .string("a")) == .tooShort(object: Self.object, key: "name", length: 1, limit: 2))
        #expect(failure(name, .string("abcd")) == .tooLong(object: Self.object, key: "name", length: 4, limit: 3))
        #expect(failure(name, .string("")) == .tooShort(object: Self.object, key: "name", length: 0, limit: 2))
    }

    @Test func dataLengthCountsBytes() throws {
        let blob = try attribute(Attribute("blob", .binaryData).validated(.length(min: nil, max: 4)))
        #expect(failure(blob, .data(Data(count: 4))) == nil)
        #expect(failure(blob, .data(Data(count: 5))) == .tooLong(object: Self.object, key: "blob", length: 5, limit: 4))
    }

    @Test func patternMustMatchTheWholeString() throws {
        let code = try attribute(Attribute("code", .string).validated(.regularExpression("[A-Z]{3}")))
        #expect(failure(code, .string("ABC")) == nil)
        #expect(
            failure(code, .string("ABCD")) == .patternMismatch(object: Self.object, key: "code", pattern: "[A-Z]{3}"))
        #expect(
            failure(code, .string("xABC")) == .patternMismatch(object: Self.object, key: "code", pattern: "[A-Z]{3}"))
        #expect(
            failure(code, .string("ABC\n")) == .patternMismatch(object: Self.object, key: "code", pattern: "[A-Z]{3}"))
        let either = try attribute(Attribute("either", .string).validated(.regularExpression("a|ab")))
        #expect(failure(either, .string("ab")) == nil)
        let unicode = try attribute(Attribute("word", .string).validated(.regularExpression("\\p{L}+")))
        #expect(failure(unicode, .string("héllo")) == nil)
    }

    @Test func freeSpacingPatternEndingInACommentCompilesAndMatches() throws {
        let code = try attribute(
            Attribute("code", .string).validated(.regularExpression("(?x) [a-z]+ # lowercase letters")))
        #expect(failure(code, .string("abc")) == nil)
        #expect(failure(code, .string("abc1")) != nil)
    }

    @Test func severalFailuresAreReportedTogetherInRuleOrder() throws {
        let code = try attribute(
            Attribute("code", .string).validated(.length(min: nil, max: 3), .regularExpression("[a-z]+")))
        #expect(
            failure(code, .string("ABCDE"))
                == .multiple([
                    .tooLong(object: Self.object, key: "code", length: 5, limit: 3),
                    .patternMismatch(object: Self.object, key: "code", pattern: "[a-z]+"),
                ]))
        let small = try attribute(Attribute("small", .integer16).validated(.range(min: nil, max: .integer(10))))
        #expect(
            failure(small, .integer(40_000))
                == .multiple([
                    .valueTooLarge(object: Self.object, key: "small", value: .integer(40_000), limit: .integer(32767)),
                    .valueTooLarge(object: Self.object, key: "small", value: .integer(40_000), limit: .integer(10)),
                ]))
    }

    @Test func modelAttributesValidateAsDeclared() throws {
        let employee = try #require(try CompanyModel.make().entity(named: "Employee"))
        let salary = try #require(employee.attributesByName["salary"])
        #expect(
            throws: ValidationError.valueTooSmall(
                object: "Employee/p1", key: "salary", value: .integer(-5), limit: .integer(0))
        ) {
            try salary.validate(.integer(-5), objectDescription: "Employee/p1")
        }
        let name = try #require(employee.attributesByName["name"])
        #expect(throws: ValidationError.tooShort(object: "Employee/p1", key: "name", length: 0, limit: 1)) {
            try name.validate(.string(""), objectDescription: "Employee/p1")
        }
    }

    @Test func combiningFlattensAndUnwraps() {
        let a = ValidationError.missingMandatoryValue(object: "o", key: "a")
        let b = ValidationError.missingMandatoryValue(object: "o", key: "b")
        let c = ValidationError.patternMismatch(object: "o", key: "c", pattern: "p")
        #expect(ValidationError.combining([]) == nil)
        #expect(ValidationError.combining([a]) == a)
        #expect(ValidationError.combining([.multiple([a, b]), c]) == .multiple([a, b, c]))
        #expect(ValidationError.combining([.multiple([a])]) == a)
        #expect(ValidationError.multiple([a, .multiple([b, c])]).errors == [a, b, c])
    }

    @Test func errorDescriptionsNameObjectAndKey() {
        let errors: [ValidationError] = [
            .missingMandatoryValue(object: "O", key: "k"), .wrongType(object: "O", key: "k", expected: .string),
            .valueTooSmall(object: "O", key: "k", value: .integer(1), limit: .integer(2)),
            .valueTooLarge(object: "O", key: "k", value: .integer(3), limit: .integer(2)),
            .tooShort(object: "O", key: "k", length: 1, limit: 2), .tooLong(object: "O", key: "k", length: 3, limit: 2),
            .patternMismatch(object: "O", key: "k", pattern: "p"),
        ]
        for error in errors {
            #expect(error.description.contains("O") && error.description.contains("k"), "\(error)")
        }
        #expect(ValidationError.multiple(errors).description.contains("; "))
    }
}
