import Foundation
import ModelImport
import XCTest

/// The relationship, uniqueness, default and version mapping, on small inline models.
final class MappingTests: XCTestCase {
  func swiftData(_ text: String) -> ImportedModel { ModelImporter.parseSwiftData([("M.swift", text)]) }
  func coreData(_ text: String) -> ImportedModel { ModelImporter.parseCoreData([("M", "M/contents", text)]) }

  func field(_ model: ImportedModel, _ type: String, _ name: String) -> ImportedField? {
    model.types.first { $0.name == type }?.fields.first { $0.name == name }
  }

  func testDeleteRuleOfTheToManyLandsOnTheChildsReference() {
    for (rule, expected) in [("cascade", ImportedDeleteRule.cascade), ("nullify", .nullify), ("deny", .deny), ("noAction", .nullify)] {
      let model = swiftData(
        """
        @Model class List {
          @Relationship(deleteRule: .\(rule), inverse: \\Item.list) var items: [Item]? = []
        }
        @Model class Item {
          var list: List?
        }
        """)
      let ref = field(model, "Item", "list")
      XCTAssertEqual(ref?.kind, .ref("List"), rule)
      XCTAssertEqual(ref?.onDelete, expected, rule)
      XCTAssertEqual(ref?.inverseOf, "List.items", rule)
      XCTAssertNil(field(model, "List", "items"), "the to-many side is not a field")
      if rule == "noAction" { XCTAssertEqual(findingKeys(model, .warning), ["no-action-rule M.swift:2:3"]) }
      if rule == "deny" { XCTAssertEqual(findingKeys(model, .warning), ["deny-delete-rule M.swift:2:3"]) }
    }
  }

  func testOneToOneGetsAReferenceOnBothSidesWithTheOtherSidesRule() {
    let model = swiftData(
      """
      @Model class Person {
        @Relationship(deleteRule: .cascade, inverse: \\Passport.holder) var passport: Passport?
      }
      @Model class Passport {
        @Relationship(deleteRule: .nullify) var holder: Person?
      }
      """)
    XCTAssertEqual(field(model, "Person", "passport")?.onDelete, .nullify)
    XCTAssertEqual(field(model, "Passport", "holder")?.onDelete, .cascade)
    XCTAssertEqual(model.warnings, [])
  }

  func testToManyWithoutInverseAndManyToManyAreNotEmitted() {
    let model = swiftData(
      """
      @Model class Album {
        var photos: [Photo]? = []
        @Relationship(inverse: \\Tag.albums) var tags: [Tag]? = []
      }
      @Model class Photo {
        var caption: String = ""
      }
      @Model class Tag {
        var albums: [Album]? = []
      }
      """)
    XCTAssertEqual(model.types.map { $0.fields.map(\.name) }, [[], ["caption"], []])
    XCTAssertEqual(findingKeys(model, .warning), ["missing-inverse M.swift:2:3"])
    XCTAssertEqual(model.warnings.first?.appleRule, "All relationships must have an inverse.")
    // A many-to-many has its inverse, and CloudKit syncs it: a note that the simulator leaves it
    // out, not a warning citing a rule it keeps.
    XCTAssertTrue(findingKeys(model, .note).contains("many-to-many M.swift:3:3"), "\(findingKeys(model, .note))")
  }

  func testToOneWithoutInverseIsEmittedWithAWarning() {
    let model = swiftData(
      """
      @Model class Owner {
        var name: String = ""
      }
      @Model class Car {
        var owner: Owner
      }
      """)
    // SwiftData would pair a single candidate each way; Owner has none back, so no inverse.
    let ref = field(model, "Car", "owner")
    XCTAssertEqual(ref?.kind, .ref("Owner"))
    XCTAssertEqual(ref?.optional, false)
    XCTAssertNil(ref?.onDelete)
    XCTAssertEqual(findingKeys(model, .warning), ["missing-inverse M.swift:5:3", "required-reference M.swift:5:3"])
    XCTAssertTrue(model.scenarioSchema().contains("  owner: ref Owner no-inverse  "))
    XCTAssertEqual(ref?.hasInverse, false)
  }

  func testInverseIsInferredWhenThereIsOneCandidateEachWay() {
    let model = swiftData(
      """
      @Model class Shelf {
        @Relationship(deleteRule: .cascade) var books: [Book]? = []
      }
      @Model class Book {
        var shelf: Shelf?
      }
      """)
    XCTAssertEqual(field(model, "Book", "shelf")?.onDelete, .cascade)
    XCTAssertEqual(findingKeys(model), ["inverse-inferred M.swift:2:3"])
  }

  func testAToOneWithoutInverseIsMarkedAndAnOrderedToManyMarksItsChildren() {
    let model = coreData(
      """
      <model>
        <entity name="Shelf">
          <relationship name="books" optional="YES" toMany="YES" ordered="YES" deletionRule="Cascade" destinationEntity="Book" inverseName="shelf" inverseEntity="Book"/>
        </entity>
        <entity name="Book">
          <relationship name="shelf" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Shelf" inverseName="books" inverseEntity="Shelf"/>
          <relationship name="author" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Author"/>
        </entity>
        <entity name="Author">
          <attribute name="name" optional="YES" attributeType="String"/>
        </entity>
      </model>
      """)
    XCTAssertEqual(field(model, "Book", "shelf")?.ordered, true)
    XCTAssertEqual(field(model, "Book", "shelf")?.hasInverse, true)
    XCTAssertEqual(field(model, "Book", "author")?.hasInverse, false)
    XCTAssertEqual(field(model, "Book", "author")?.ordered, false)
    let schema = model.scenarioSchema()
    XCTAssertTrue(schema.contains("shelf: ref Shelf? on-delete cascade ordered"), schema)
    XCTAssertTrue(schema.contains("author: ref Author? no-inverse"), schema)
  }

  func testADeleteRuleOnTheChildsToOneIsNotExpressed() {
    let model = swiftData(
      """
      @Model class List {
        @Relationship(inverse: \\Item.list) var items: [Item]? = []
      }
      @Model class Item {
        @Relationship(deleteRule: .cascade) var list: List?
      }
      """)
    XCTAssertEqual(field(model, "Item", "list")?.onDelete, .nullify)
    XCTAssertEqual(findingKeys(model, .warning), ["child-delete-rule M.swift:5:3"])
  }

  func testUniqueness() {
    let model = swiftData(
      """
      @Model class Trip {
        #Unique<Trip>([\\.name, \\.startDate])
        var name: String = ""
        var startDate: Date = .now
      }
      @Model class User {
        #Unique<User>([\\.email])
        var email: String?
      }
      """)
    XCTAssertEqual(model.types[0].uniqueBy, ["name", "startDate"])
    XCTAssertEqual(model.types[0].fields.map(\.unique), [false, false])
    XCTAssertEqual(model.types[1].uniqueBy, ["email"])
    XCTAssertEqual(model.types[1].fields.map(\.unique), [true])
    XCTAssertFalse(model.types.contains { $0.singleton })
    XCTAssertEqual(findingKeys(model, .warning), ["unique-constraint M.swift:2:3", "unique-constraint M.swift:7:3"])
    XCTAssertTrue(model.scenarioSchema().contains("type Trip unique-by name,startDate  "))
  }

  func testAModelWithoutAttributesIsNotASingleton() {
    let model = swiftData("@Model final class Settings {\n  init() {}\n}\n")
    XCTAssertEqual(model.types.map(\.name), ["Settings"])
    XCTAssertFalse(model.types[0].singleton)
    XCTAssertFalse(model.scenarioSchema().contains("singleton"))
  }

  func testTypesAndDefaults() {
    let model = swiftData(
      """
      @Model public final class Kinds {
        public var s: Optional<String>
        let i: Int64 = -9_223_372_036_854_775_808
        var u: UInt8 = 0x1F
        var b: Bool = true
        var d: Date = Date()
        var f: Float = 1.5
        var g: Double = -2_500.25e-1
        var price: Decimal = 3
        var blob: Data = Data()
        var photo: Data?
        var tags: [String] = []
        var nl: String = "a\\nb"
        var observed: Int = 0 {
          didSet { print("changed") }
        }
        var computed: String { s ?? "" }
      }
      """)
    let rendered = model.types[0].fields.map { "\($0.name) \($0.kind.scenarioName)\($0.optional ? "?" : "") \($0.defaultLiteral ?? "-")" }
    XCTAssertEqual(
      rendered,
      [
        "s string? -", "i int -9223372036854775808", "u int 31", "b bool true", "d date 0s", "f double 1.5", "g double -250.025", "price double 3.0",
        "blob bytes 0x",
        "photo bytes? -", "tags string \"\"",
        #"nl string "a\nb""#,
        "observed int 0",
      ])
  }

  func testSwiftNamesAreSanitized() {
    let model = swiftData("@Model class Café {\n  var `été`: String = \"\"\n  var ok_name: Int = 1\n}\n")
    XCTAssertEqual(model.types.map(\.name), ["Caf_"])
    XCTAssertEqual(model.types[0].fields.map(\.name), ["t_", "ok_name"])
    XCTAssertEqual(findingKeys(model), ["name-sanitized M.swift:1:1", "name-sanitized M.swift:2:3"])
  }

  func testSinceComesFromVersions() throws {
    let model = ModelImporter.parseSwiftData(try corpusSources("Versioned/NotesSchema.swift"))
    XCTAssertEqual(model.types.map { "\($0.name) \($0.since)" }, ["Note 1", "Folder 2"])
    XCTAssertEqual(model.types[0].fields.map { "\($0.name) \($0.since)" }, ["title 1", "body 1", "pinned 1", "createdAt 2", "folder 2"])
  }

  func testVersionsAreOrderedByIdentifierNotByFileOrder() {
    let model = swiftData(
      """
      enum V2: VersionedSchema {
        static var versionIdentifier = Schema.Version(2, 0, 0)
        @Model class A {
          var x: String = ""
          var y: String = ""
        }
      }
      enum V1: VersionedSchema {
        static var versionIdentifier = Schema.Version(1, 0, 0)
        @Model class A {
          var x: String = ""
        }
        @Model class Gone {
          var z: Int = 0
        }
      }
      """)
    XCTAssertEqual(model.versions, ["V1", "V2"])
    XCTAssertEqual(model.types[0].fields.map(\.since), [1, 2])
    XCTAssertEqual(findingKeys(model, .warning), ["type-removed M.swift:13:3"])
  }

  func testCoreDataInheritanceIsFlattened() {
    let xml = """
      <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
      <model>
        <entity name="Media" isAbstract="YES">
          <attribute name="title" optional="YES" attributeType="String"/>
        </entity>
        <entity name="Book" parentEntity="Media">
          <attribute name="pages" optional="YES" attributeType="Integer 32" usesScalarValueType="YES"/>
        </entity>
        <entity name="Odd">
          <attribute name="blob" optional="YES" attributeType="Wibble"/>
          <gadget/>
        </entity>
      </model>
      """
    let model = ModelImporter.parseCoreData([("M", "contents", xml)])
    XCTAssertEqual(model.types.map(\.name), ["Book", "Odd"])
    XCTAssertEqual(model.types[0].fields.map(\.name), ["title", "pages"])
    XCTAssertEqual(
      findingKeys(model),
      ["abstract-entity contents:3:3", "inheritance-flattened contents:6:3", "unreadable-source contents:10:5", "unreadable-source contents:11:5"])
  }

  func testRenderedFinding() throws {
    let model = ModelImporter.parseSwiftData(try corpusSources("TripPlanner/Trip.swift"))
    let finding = try XCTUnwrap(model.findings.first { $0.rule == "unique-constraint" })
    XCTAssertEqual(
      finding.rendered(),
      """
      TripPlanner/Trip.swift:8:3: warning: Trip is unique by name: CloudKit cannot enforce it, so two devices can each create a record with the same name and both survive the sync; it is imported as `unique`, so Trip records never upload in a run.
        Apple's rule: CloudKit integration does not support unique constraints.
        fix: remove `@Attribute(.unique)` from `name` and derive the record name from the key (de-duplicating after the fact loses the duplicate's writes, and can delete both copies)

      """)
  }

  /// An attribute or constraint declared once on a parent entity is reported once, not again for
  /// every entity that inherits it (a real model gave 129 findings for 83 problems), in the name
  /// of the entity that declares it, saying which entities inherit it; the fix is made there.
  func testAnInheritedDeclarationIsReportedOnce() {
    let model = coreData(
      """
      <model>
      <entity name="Item" isAbstract="YES"><attribute name="title" attributeType="String"/>
      <attribute name="code" optional="YES" attributeType="String"/>
      <uniquenessConstraints><uniquenessConstraint><constraint value="code"/></uniquenessConstraint></uniquenessConstraints></entity>
      <entity name="Book" parentEntity="Item"><attribute name="pages" attributeType="Integer 64" defaultValueString="0"/></entity>
      <entity name="Film" parentEntity="Item"><attribute name="minutes" attributeType="Integer 64" defaultValueString="0"/></entity>
      </model>
      """)
    XCTAssertEqual(model.warnings.map(\.rule), ["required-without-default", "unique-constraint"], "\(model.warnings.map(\.message))")
    XCTAssertTrue(
      model.warnings[0].message.hasPrefix("Item.title (inherited by Book and Film) is neither optional nor defaulted"), model.warnings[0].message)
    XCTAssertTrue(model.warnings[0].message.hasSuffix("so Book and Film records never upload in a run."), model.warnings[0].message)
    XCTAssertEqual(
      model.warnings[0].fix, "set a Default Value for attribute `title` of entity `Item` in the Data Model inspector, or tick Optional")
    XCTAssertTrue(model.warnings[1].message.hasPrefix("Item (inherited by Book and Film) is unique by code:"), model.warnings[1].message)
    XCTAssertTrue(model.warnings[1].fix.hasPrefix("remove the constraint `code` from the Constraints of entity `Item`"), model.warnings[1].fix)
    // What each is about, by the scenario's names: the first type that inherits it.
    XCTAssertEqual(model.warnings.map { "\($0.type ?? "-").\($0.field ?? "-")" }, ["Book.title", "Book.code"])
  }

  /// A parent entity that has records of its own reports its declarations itself, though Xcode
  /// writes its children first (entities in alphabetical order): not as inherited by itself.
  func testAParentWrittenAfterItsChildReportsItsOwnDeclarations() {
    let model = coreData(
      """
      <model>
      <entity name="Book" parentEntity="Media"><attribute name="pages" optional="YES" attributeType="Integer 64"/></entity>
      <entity name="Media"><attribute name="title" attributeType="String"/></entity>
      </model>
      """)
    XCTAssertEqual(model.warnings.count, 1, "\(model.warnings.map(\.message))")
    XCTAssertTrue(model.warnings[0].message.hasPrefix("Media.title (inherited by Book) is neither optional nor defaulted"), model.warnings[0].message)
    XCTAssertTrue(model.warnings[0].message.hasSuffix("so Media and Book records never upload in a run."), model.warnings[0].message)
    XCTAssertEqual([model.warnings[0].type, model.warnings[0].field], ["Media", "title"])
  }

  /// A relationship whose destination is an abstract parent entity pairs with the inverse its
  /// heirs inherit: neither side is said to lack an inverse (both had been, each advising to add
  /// the inverse the model already has), and the heirs' references carry the to-many's rule.
  func testARelationshipToAnAbstractParentPairsWithTheInverseItsHeirsInherit() {
    let model = coreData(
      """
      <model>
      <entity name="Media" isAbstract="YES">
      <relationship name="shelf" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Shelf" inverseName="items" inverseEntity="Shelf"/>
      </entity>
      <entity name="Book" parentEntity="Media"/>
      <entity name="Film" parentEntity="Media"/>
      <entity name="Shelf">
      <relationship name="items" optional="YES" toMany="YES" deletionRule="Cascade" destinationEntity="Media" inverseName="shelf" inverseEntity="Media"/>
      </entity>
      </model>
      """)
    XCTAssertEqual(model.warnings, [], "\(model.warnings.map(\.message))")
    XCTAssertEqual(field(model, "Book", "shelf")?.onDelete, .cascade)
    XCTAssertEqual(field(model, "Film", "shelf")?.inverseOf, "Shelf.items")
    XCTAssertEqual(field(model, "Film", "shelf")?.hasInverse, true)
  }
}
