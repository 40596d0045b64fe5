import Foundation
import ModelImport
import XCTest

/// The exact schema and findings of each corpus model.
final class CorpusTests: XCTestCase {
  func testTripPlannerSchema() throws {
    let model = ModelImporter.parseSwiftData(try corpusSources("TripPlanner/Place.swift", "TripPlanner/Trip.swift"))
    XCTAssertEqual(
      model.scenarioSchema(),
      #"""
      # imported from TripPlanner/Place.swift and TripPlanner/Trip.swift (SwiftData)
      # No field is marked `mutable`: add it to the fields your app edits after creating a record.
      type Place                               # TripPlanner/Place.swift:10:1
        name: string = ""                      # TripPlanner/Place.swift:12:3
        latitude: double = 0.0                 # TripPlanner/Place.swift:13:3
        longitude: double = 0.0                # TripPlanner/Place.swift:14:3
        photo: bytes?                          # TripPlanner/Place.swift:15:3
      type Trip unique-by name                 # TripPlanner/Trip.swift:6:1
        name: string unique                    # TripPlanner/Trip.swift:8:3
        startDate: date = 0s                   # TripPlanner/Trip.swift:9:3
        endDate: date?                         # TripPlanner/Trip.swift:10:3
        budget: double = 0.0                   # TripPlanner/Trip.swift:11:3
        status: string = ""                    # TripPlanner/Trip.swift:12:3
        notes: string?                         # TripPlanner/Trip.swift:13:3
        travellerCount: int = 1                # TripPlanner/Trip.swift:14:3
        isFavourite: bool = false              # TripPlanner/Trip.swift:15:3
      type Leg                                 # TripPlanner/Trip.swift:43:1
        trip: ref Trip? on-delete cascade      # TripPlanner/Trip.swift:44:3, inverse of Trip.legs
        departure: date = 0s                   # TripPlanner/Trip.swift:45:3
        arrival: ref Place? on-delete nullify  # TripPlanner/Trip.swift:46:3, inverse of Place.arrivals
        seat: string?                          # TripPlanner/Trip.swift:47:3
        legID: string = ""                     # TripPlanner/Trip.swift:48:3

      """#)
    XCTAssertEqual(
      findingKeys(model),
      [
        "extension-not-read TripPlanner/Place.swift:24:1",
        "required-without-default TripPlanner/Trip.swift:8:3",
        "unique-constraint TripPlanner/Trip.swift:8:3",
        "default-approximated TripPlanner/Trip.swift:9:3",
        "kind-approximated TripPlanner/Trip.swift:11:3",
        "default-approximated TripPlanner/Trip.swift:12:3",
        "opaque-type TripPlanner/Trip.swift:12:3",
        "required-reference TripPlanner/Trip.swift:16:3",
        "default-approximated TripPlanner/Trip.swift:45:3",
        "opaque-type TripPlanner/Trip.swift:47:3",
        "default-approximated TripPlanner/Trip.swift:48:3",
        "opaque-type TripPlanner/Trip.swift:48:3",
      ])
  }

  func testVersionedSchema() throws {
    let model = ModelImporter.parseSwiftData(try corpusSources("Versioned/NotesSchema.swift"))
    XCTAssertEqual(model.versions, ["NotesSchemaV1", "NotesSchemaV2"])
    XCTAssertEqual(
      model.scenarioSchema(),
      #"""
      # imported from Versioned/NotesSchema.swift (SwiftData, 2 versions)
      # No field is marked `mutable`: add it to the fields your app edits after creating a record.
      type Note                                        # Versioned/NotesSchema.swift:22:3
        title: string = ""                             # Versioned/NotesSchema.swift:23:5
        body: string = ""                              # Versioned/NotesSchema.swift:24:5
        pinned: int = 0                                # Versioned/NotesSchema.swift:25:5
        createdAt: date = 0s since 2                   # Versioned/NotesSchema.swift:26:5
        folder: ref Folder? on-delete cascade since 2  # Versioned/NotesSchema.swift:27:5, inverse of Folder.notes
      type Folder since 2                              # Versioned/NotesSchema.swift:31:3
        name: string = "Notes"                         # Versioned/NotesSchema.swift:32:5

      """#)
    XCTAssertEqual(
      findingKeys(model),
      [
        "field-removed Versioned/NotesSchema.swift:13:5",
        "field-kind-changed Versioned/NotesSchema.swift:25:5",
        "default-approximated Versioned/NotesSchema.swift:26:5",
      ])
  }

  func testCleanModelHasNoWarnings() throws {
    let model = ModelImporter.parseSwiftData(try corpusSources("Clean/Recipes.swift"))
    XCTAssertEqual(model.warnings, [])
    XCTAssertEqual(
      model.scenarioSchema(),
      #"""
      # imported from Clean/Recipes.swift (SwiftData)
      # No field is marked `mutable`: add it to the fields your app edits after creating a record.
      type Recipe                                  # Clean/Recipes.swift:8:1
        title: string = ""                         # Clean/Recipes.swift:10:3
        servings: int = 2                          # Clean/Recipes.swift:11:3
        vegetarian: bool = false                   # Clean/Recipes.swift:12:3
        createdAt: date = 0s                       # Clean/Recipes.swift:13:3
        summary: string?                           # Clean/Recipes.swift:14:3
        cookbook: ref Cookbook? on-delete nullify  # Clean/Recipes.swift:17:3, inverse of Cookbook.recipes
      type Ingredient                              # Clean/Recipes.swift:23:1
        name: string = ""                          # Clean/Recipes.swift:25:3
        quantity: int = 1                          # Clean/Recipes.swift:26:3
        recipe: ref Recipe? on-delete cascade      # Clean/Recipes.swift:27:3, inverse of Recipe.ingredients
      type Cookbook                                # Clean/Recipes.swift:32:1
        title: string = "My Cookbook"              # Clean/Recipes.swift:34:3

      """#)
    XCTAssertEqual(
      findingKeys(model),
      [
        "default-approximated Clean/Recipes.swift:13:3"
      ])
  }

  func testCoreDataInventorySchema() throws {
    let model = ModelImporter.parseCoreData(try inventoryVersions())
    XCTAssertEqual(model.source, .coreData)
    XCTAssertEqual(model.versions, ["Inventory", "Inventory 2"])
    XCTAssertEqual(
      model.scenarioSchema(),
      #"""
      # imported from Inventory.xcdatamodeld/Inventory.xcdatamodel/contents and Inventory.xcdatamodeld/Inventory 2.xcdatamodel/contents (Core Data, 2 versions)
      # No field is marked `mutable`: add it to the fields your app edits after creating a record.
      type Warehouse unique-by code                         # Inventory.xcdatamodeld/Inventory 2.xcdatamodel/contents:3:5
        name: string                                        # Inventory.xcdatamodeld/Inventory 2.xcdatamodel/contents:4:9
        code: string? unique                                # Inventory.xcdatamodeld/Inventory 2.xcdatamodel/contents:5:9
        openedAt: date? since 2                             # Inventory.xcdatamodeld/Inventory 2.xcdatamodel/contents:6:9
        manager: ref Person? on-delete cascade since 2      # Inventory.xcdatamodeld/Inventory 2.xcdatamodel/contents:8:9, inverse of Person.managedWarehouse
      type Shelf                                            # Inventory.xcdatamodeld/Inventory 2.xcdatamodel/contents:15:5
        label: string?                                      # Inventory.xcdatamodeld/Inventory 2.xcdatamodel/contents:16:9
        capacity: int = 20 since 2                          # Inventory.xcdatamodeld/Inventory 2.xcdatamodel/contents:17:9
        isFull: bool = false since 2                        # Inventory.xcdatamodeld/Inventory 2.xcdatamodel/contents:18:9
        weightLimit: double? = 0.0 since 2                  # Inventory.xcdatamodeld/Inventory 2.xcdatamodel/contents:19:9
        warehouse: ref Warehouse on-delete cascade ordered  # Inventory.xcdatamodeld/Inventory 2.xcdatamodel/contents:21:9, inverse of Warehouse.shelves
      type Item unique-by sku,shelf since 2                 # Inventory.xcdatamodeld/Inventory 2.xcdatamodel/contents:24:5
        sku: string = "UNKNOWN"                             # Inventory.xcdatamodeld/Inventory 2.xcdatamodel/contents:25:9
        quantity: int? = 0                                  # Inventory.xcdatamodeld/Inventory 2.xcdatamodel/contents:26:9
        identifier: string?                                 # Inventory.xcdatamodeld/Inventory 2.xcdatamodel/contents:27:9
        shelf: ref Shelf? on-delete deny                    # Inventory.xcdatamodeld/Inventory 2.xcdatamodel/contents:28:9, inverse of Shelf.items
      type Tag since 2                                      # Inventory.xcdatamodeld/Inventory 2.xcdatamodel/contents:37:5
        title: string?                                      # Inventory.xcdatamodeld/Inventory 2.xcdatamodel/contents:38:9
      type Person since 2                                   # Inventory.xcdatamodeld/Inventory 2.xcdatamodel/contents:40:5
        fullName: string?                                   # Inventory.xcdatamodeld/Inventory 2.xcdatamodel/contents:41:9
        managedWarehouse: ref Warehouse? on-delete nullify  # Inventory.xcdatamodeld/Inventory 2.xcdatamodel/contents:42:9, inverse of Warehouse.manager

      """#)
    XCTAssertEqual(
      findingKeys(model),
      [
        "required-without-default Inventory.xcdatamodeld/Inventory 2.xcdatamodel/contents:4:9",
        "ordered-relationship Inventory.xcdatamodeld/Inventory 2.xcdatamodel/contents:7:9",
        "unique-constraint Inventory.xcdatamodeld/Inventory 2.xcdatamodel/contents:10:13",
        "required-reference Inventory.xcdatamodeld/Inventory 2.xcdatamodel/contents:21:9",
        "deny-delete-rule Inventory.xcdatamodeld/Inventory 2.xcdatamodel/contents:22:9",
        "opaque-type Inventory.xcdatamodeld/Inventory 2.xcdatamodel/contents:27:9",
        "missing-inverse Inventory.xcdatamodeld/Inventory 2.xcdatamodel/contents:29:9",
        "unique-constraint Inventory.xcdatamodeld/Inventory 2.xcdatamodel/contents:31:13",
        "field-removed Inventory.xcdatamodeld/Inventory.xcdatamodel/contents:10:9",
      ])
  }

  func testUnreadableLinesAreNotes() throws {
    let model = ModelImporter.parseSwiftData(try corpusSources("Unreadable/Odd.swift"))
    XCTAssertEqual(
      model.scenarioSchema(),
      #"""
      # imported from Unreadable/Odd.swift (SwiftData)
      # No field is marked `mutable`: add it to the fields your app edits after creating a record.
      type Gadget unique-by title                 # Unreadable/Odd.swift:4:1
        default: string = "a \"quoted\" {brace}"  # Unreadable/Odd.swift:6:3
        secret: int = -7                          # Unreadable/Odd.swift:7:3
        title: string = "Gadget" unique           # Unreadable/Odd.swift:10:3
        mode: string = ""                         # Unreadable/Odd.swift:11:3
        interpolated: string = ""                 # Unreadable/Odd.swift:16:3

      """#)
    XCTAssertEqual(
      findingKeys(model),
      [
        "name-sanitized Unreadable/Odd.swift:7:3",
        "unreadable-source Unreadable/Odd.swift:8:3",
        "unreadable-source Unreadable/Odd.swift:9:3",
        "field-renamed Unreadable/Odd.swift:10:3",
        "unique-constraint Unreadable/Odd.swift:10:3",
        "unreadable-source Unreadable/Odd.swift:11:3",
        "unique-constraint Unreadable/Odd.swift:12:3",
        "unreadable-source Unreadable/Odd.swift:12:3",
        "index-ignored Unreadable/Odd.swift:13:3",
        "unreadable-source Unreadable/Odd.swift:15:3",
        "default-approximated Unreadable/Odd.swift:16:3",
      ])
  }
}

/// The Core Data model with a hierarchy of entities, and what holds for every corpus model.
final class CorpusHierarchyTests: XCTestCase {
  /// An abstract parent's attributes, relationships and constraint are copied into each entity
  /// that inherits from it (a grandchild too), and each is reported once, at the parent's line, in
  /// the parent's name; a relationship to the abstract parent pairs with the inverse its heirs
  /// inherit; Double, Float and Decimal are doubles, Binary is bytes.
  func testLibrarySchema() throws {
    let model = try ModelImporter.load(path: corpus.appendingPathComponent("Library.xcdatamodel").path)
    let schema = model.scenarioSchema().split(separator: "\n").map { line in
      // (Without the comments' absolute paths.)
      String(line.prefix { $0 != "#" }).trimmingCharacters(in: .whitespaces)
    }.filter { !$0.isEmpty }
    XCTAssertEqual(
      schema,
      [
        "type Book unique-by isbn", "title: string", "rating: double? = 0.0", "price: double? = 9.99", "cover: bytes?", "isbn: string? unique",
        "addedAt: date = 0s", "shelf: ref Shelf? on-delete deny ordered", "borrower: ref Member? no-inverse", "pages: int? = 0",
        "type Film unique-by isbn", "title: string", "rating: double? = 0.0", "price: double? = 9.99", "cover: bytes?", "isbn: string? unique",
        "addedAt: date = 0s", "shelf: ref Shelf? on-delete deny ordered", "borrower: ref Member? no-inverse", "minutes: double? = 90.5",
        "type AudioBook unique-by isbn", "title: string", "rating: double? = 0.0", "price: double? = 9.99", "cover: bytes?",
        "isbn: string? unique", "addedAt: date = 0s", "shelf: ref Shelf? on-delete deny ordered", "borrower: ref Member? no-inverse",
        "pages: int? = 0", "narrator: string", "type Shelf", "label: string?", "type Branch", "city: string?", "type Member", "name: string?",
        "card: bytes?",
      ])
    XCTAssertEqual(
      model.findings.map { "\($0.rule) \($0.location.line):\($0.location.column)" },
      [
        "abstract-entity 3:5", "required-without-default 4:9", "kind-approximated 6:9", "default-approximated 9:9", "missing-inverse 11:9",
        "unique-constraint 13:13", "inheritance-flattened 18:5", "inheritance-flattened 21:5", "inheritance-flattened 24:5",
        "required-without-default 25:9", "deny-delete-rule 29:9", "ordered-relationship 29:9", "many-to-many 30:9", "required-reference 30:9",
      ])
    let title = try XCTUnwrap(model.warnings.first)
    XCTAssertTrue(title.message.hasPrefix("Media.title (inherited by Book, Film and AudioBook) is neither optional nor defaulted"), title.message)
    XCTAssertEqual(title.fix, "set a Default Value for attribute `title` of entity `Media` in the Data Model inspector, or tick Optional")
    XCTAssertEqual([title.type, title.field], ["Book", "title"])
  }

  /// Every model of the corpus: no declaration reported twice (the same rule at the same place),
  /// no warning repeated word for word, and every warning with a fix and the type it is about.
  func testNoCorpusModelReportsADeclarationTwice() throws {
    let names = try FileManager.default.contentsOfDirectory(atPath: corpus.path).filter { !$0.hasPrefix(".") }.sorted()
    XCTAssertEqual(names, ["Clean", "Inventory.xcdatamodeld", "Library.xcdatamodel", "TripPlanner", "Unreadable", "Versioned"])
    for name in names {
      let model = try ModelImporter.load(path: corpus.appendingPathComponent(name).path)
      var places: Set<String> = []
      var messages: Set<String> = []
      for f in model.findings {
        XCTAssertTrue(places.insert("\(f.rule) \(f.location)").inserted, "\(name): \(f.rule) twice at \(f.location)")
        XCTAssertTrue(messages.insert(f.message).inserted, "\(name): said twice: \(f.message)")
      }
      for w in model.warnings {
        XCTAssertFalse(w.fix.isEmpty, "\(name): no fix for \(w.message)")
        XCTAssertNotNil(w.type, "\(name): no type for \(w.message)")
      }
    }
  }
}
