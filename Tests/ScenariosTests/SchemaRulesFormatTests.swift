import Foundation
import ModelImport
import Replica
@_spi(Kernel) import Simulator
import Testing

@testable import Scenarios

/// References, uniqueness and app versions in scenario files: what the lines mean, how they are
/// written back, and what a mistake in them says.
@Suite struct SchemaRulesFormatTests {
  static let text = """
    devices iPad phone
    app-version 1 phone

    type List unique-by name
      name: string = "" mutable
    type Item
      list: ref List? on-delete cascade
      owner: ref List? on-delete deny
      title: string = ""
      color: string = "none" since 2
    type Settings singleton since 2
      theme: string = "light" mutable

    at 0s iPad create List l1 name="Home"
    at 1s phone create Item i1 list=l1 title="Lamp"
    at 2s phone upgrade 2
    at 3s phone set i1 color="red"
    settle
    """

  @Test func theModifiersAreRead() throws {
    let file = try parsed(Self.text)
    let schema = file.schema
    #expect(schema.types[0].uniqueness == .fields([0]))
    #expect(schema.types[1].fields[0].onDelete == .cascade)
    #expect(schema.types[1].fields[1].onDelete == .deny)
    #expect(schema.types[1].fields[2].onDelete == .nullify)
    #expect(schema.types[1].fields[3].since == 2)
    #expect(schema.types[2].uniqueness == .singleton)
    #expect(schema.types[2].since == 2)
    #expect(schema.types[2].fields[0].since == 2, "a field is as old as its type unless it says otherwise")
    #expect(schema.latestVersion == 2)
    #expect(file.initialAppVersions == [2, 1])
    #expect(file.timeline.map(\.action).contains(.upgrade(device: "phone", version: 2)))
  }

  @Test func theWriterWritesThemBackAndTheResultParsesToTheSameFile() throws {
    let file = try parsed(Self.text)
    let text = file.rendered()
    for line in [
      "type List unique-by name", "  list: ref List? on-delete cascade", "  owner: ref List? on-delete deny", "  color: string = \"none\" since 2",
      "type Settings singleton since 2", "  theme: string = \"light\" mutable", "app-version 1 phone", "at 2s phone upgrade 2",
    ] {
      #expect(text.contains(line + "\n"), "missing \(line) in\n\(text)")
    }
    #expect(!text.contains("on-delete nullify"), "nullify is the default and is not written")
    let again = try parsed(text)
    #expect(again.schema == file.schema)
    #expect(again.appVersions.map(\.version) == [1])
  }

  @Test(arguments: [
    ("type T unique-by\n  a: int = 0", "expected the key's fields after 'unique-by'"),
    ("type T unique-by b\n  a: int = 0", "T has no field 'b'"),
    ("type T unique-by a,a\n  a: int = 0", "'a' is named twice in 'unique-by'"),
    ("type T unique-by body\n  body: text = \"\"", "'body' is a text field"),
    ("type T singleton unique-by a\n  a: int = 0", "either a 'singleton' or 'unique-by'"),
    ("type T append-only singleton", "cannot be a 'singleton'"),
    ("type T since 1", "expected a schema version from 2 to 1000"),
    ("type T singelton", "did you mean 'singleton'?"),
    ("type T since 3\n  a: int = 0 since 2", "a field is no older than its type"),
    ("type T\n  a: int = 0 on-delete cascade", "'on-delete' is for ref fields"),
    ("type T\n  a: ref T? on-delete cascde", "did you mean 'cascade'?"),
    ("type T\n  a: ref T? on-delete", "expected a delete rule after 'on-delete'"),
    ("type T\n  a: int = 0 ordered", "'ordered' is for ref fields"),
    ("type T\n  a: int = 0 no-inverse", "'no-inverse' is for ref fields"),
    ("type T\n  a: ref T? ordered ordered", "'ordered' is given twice"),
    ("type T\n  a: ref T? no-inverses", "did you mean 'no-inverse'?"),
    ("type T\n  a: int = 0 since 2 since 3", "'since' is given twice"),
  ])
  func schemaMistakesSayWhatIsWrong(schema: String, message: String) {
    let text = "devices iPad\n\(schema)\nsettle\n"
    let all = messages(text).joined(separator: "\n")
    #expect(all.contains(message), "\(all)")
  }

  @Test(arguments: [
    ("app-version 3 phone", "", "app version 3 is newer than the schema"),
    ("app-version 1 phone\napp-version 1 phone", "", "already has an app version"),
    ("app-version 1 tablet", "", "unknown device 'tablet'"),
    ("app-version 1 phone", "at 1s phone upgrade 1", "phone already runs app version 1 here"),
    ("", "at 1s phone upgrade 3", "app version 3 is newer than the schema"),
    ("app-version 1 phone", "at 1s phone create Note n1 color=\"red\"", "phone runs app version 1 here, which does not know Note.color (since 2)"),
    ("app-version 1 phone", "at 1s phone create Tag t1", "which does not know Tag (since 2)"),
    ("app-version 1 phone", "at 0s iPad create Note n1\nat 1s phone set n1 color=\"red\"\nat 2s phone upgrade 2", "does not know Note.color"),
    ("", "at 1s phone upgrade", "expected the app version to upgrade to"),
  ])
  func versionMistakesSayWhatIsWrong(header: String, timeline: String, message: String) {
    let text = """
      devices iPad phone
      \(header)
      type Note
        title: string = ""
        color: string = "none" since 2
      type Tag since 2
        label: string = ""
      \(timeline)
      settle
      """
    let all = messages(text).joined(separator: "\n")
    #expect(all.contains(message), "\(all)")
  }

  @Test func anUpgradeBeforeTheWriteMakesItLegal() throws {
    _ = try parsed(
      """
      devices iPad phone
      app-version 1 phone
      type Note
        color: string = "none" since 2
      at 0s iPad create Note n1
      at 2s phone upgrade 2
      at 3s phone set n1 color="red"
      settle
      """)
  }

  static var corpus: URL {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .appendingPathComponent("ModelImportTests/Corpus")
  }

  @Test func schemaFromImportsTheUsersModel() throws {
    let path = Self.corpus.appendingPathComponent("Clean").path
    let file = try parsed(
      """
      devices iPad phone
      schema from \(path)
      at 0s iPad create Recipe r1 title="Soup"
      at 1s phone create Ingredient g1 recipe=r1 name="Leek"
      settle
      """)
    #expect(file.schema.typeIndex(named: "Recipe") != nil)
    let ingredient = try #require(file.schema.types.first { $0.name == "Ingredient" })
    #expect(ingredient.fields.first { $0.name == "recipe" }?.onDelete == .cascade)
    #expect(file.schemaSource == path)
    #expect(file.schema.safetyFindings().isEmpty, "the clean corpus model is CloudKit-safe")
    #expect(file.rendered().contains("# the types below were imported by `schema from \(path)`"))
    let report = ScenarioRunner.run(file).report
    #expect(report.violations.isEmpty, "\(report.text)")
  }

  @Test func schemaFromReadsAPathRelativeToTheScenarioFile() throws {
    let source = Self.corpus.appendingPathComponent("here.scenario").path
    let file = try parsed("devices iPad\nschema from TripPlanner\nsettle\n", source: source)
    #expect(file.schema.typeIndex(named: "Trip") != nil)
    let trip = try #require(file.schema.types.first { $0.name == "Trip" })
    #expect(trip.uniqueness == .fields([0]))
    #expect(file.schema.safetyFindings().contains { $0.problem == .uniqueConstraint })
  }

  /// A type read with `schema from` is judged by the importer's findings, in the model's terms
  /// and at the model's lines (what `sim-cli import` prints), not in scenario syntax; the file's
  /// own types are judged in scenario syntax; a stranded record's explanation quotes the model's
  /// finding.
  @Test func aModelsTypesAreJudgedInTheModelsTerms() throws {
    let source = Self.corpus.appendingPathComponent("here.scenario").path
    let file = try parsed(
      """
      devices iPad phone
      schema from TripPlanner
      type Note
        title: string
      at 0s iPad create Trip t1 name="Lisbon"
      at 1s iPad create Note n1 title="x"
      settle
      """, source: source)
    let findings = file.schema.safetyFindings()
    #expect(findings.map(\.problem) == [.requiredWithoutDefault, .uniqueConstraint, .requiredReference, .requiredWithoutDefault])
    let trip = try #require(findings.first)
    #expect(trip.modelLocation?.description == Self.corpus.appendingPathComponent("TripPlanner/Trip.swift").path + ":8:3")
    #expect([trip.type, trip.field] == ["Trip", "name"])
    #expect(trip.fix == "give `name` a default value: `var name: String = \"\"`, or make it optional: `var name: String?`")
    let note = try #require(findings.last)
    #expect(note.modelLocation == nil)
    #expect(note.fix == "write `title: string?` or add `= …`")
    let report = ScenarioRunner.run(file).report
    let stranded = report.anomalies.filter { $0.kind == .strandedRecord }
    #expect(stranded.count == 2, "\(report.text)")
    #expect(stranded.contains { $0.explanation.contains("Trip.name is neither optional nor defaulted") }, "\(report.text)")
    #expect(stranded.contains { $0.explanation.contains("Note.title is required and has no default") }, "\(report.text)")
  }

  /// A stranded record is explained by a finding that stops its type's uploads, not by the
  /// first about the type: Gadget.title was renamed (a warning that stops nothing) and is unique
  /// (which does); Core Data's Deny on Shelf.items stops the Book, Film and AudioBook records
  /// that refer to a shelf, not the Shelf records.
  @Test func aStrandedRecordIsExplainedByAFindingThatStopsItsType() throws {
    let gadgets = try parsed(
      """
      devices iPad phone
      schema from Unreadable
      at 0s iPad create Gadget g1
      settle
      """, source: Self.corpus.appendingPathComponent("here.scenario").path)
    let findings = gadgets.schema.safetyFindings()
    #expect(findings.first?.problem == .fieldRenamed && findings.first?.blocks == [], "\(findings)")
    #expect(findings.contains { $0.problem == .uniqueConstraint && $0.blocks == ["Gadget"] })
    let stranded = try #require(ScenarioRunner.run(gadgets).report.anomalies.first { $0.kind == .strandedRecord })
    #expect(stranded.explanation.contains("— Gadget is unique by title: CloudKit cannot enforce it"), "\(stranded.explanation)")

    let library = try parsed(
      """
      devices iPad phone
      schema from Library.xcdatamodel
      at 0s iPad create Shelf s1
      at 1s iPad create Film f1 title="Heat" shelf=s1
      settle
      """, source: Self.corpus.appendingPathComponent("here.scenario").path)
    let deny = try #require(library.schema.safetyFindings().first { $0.problem == .denyDeleteRule })
    #expect([deny.type, deny.field] == ["Shelf", "items"])
    #expect(deny.blocks == ["Book", "Film", "AudioBook"])
    let report = ScenarioRunner.run(library).report
    #expect(report.anomalies.filter { $0.kind == .strandedRecord }.map { $0.record?.name } == ["f1"], "\(report.text)")
  }

  /// Every warning the importer makes is a ``SchemaFinding`` of its own problem: those the corpus
  /// has not (No Action, a child's Cascade, a type removed, too many fields) here.
  @Test func everyImportWarningIsASchemaFinding() throws {
    var fields = (0..<65).map { "  var f\($0): Int = 0" }.joined(separator: "\n")
    fields += "\n  @Relationship(deleteRule: .noAction, inverse: \\Leaf.owner) var leaves: [Leaf]? = []"
    let text = """
      import SwiftData
      enum V1: VersionedSchema {
        static var versionIdentifier = Schema.Version(1, 0, 0)
        static var models: [any PersistentModel.Type] { [Wide.self, Leaf.self, Gone.self] }
        @Model final class Wide {
          var f0: Int = 0
        }
        @Model final class Leaf {
          var owner: Wide?
        }
        @Model final class Gone {
          var x: Int = 0
        }
      }
      enum V2: VersionedSchema {
        static var versionIdentifier = Schema.Version(2, 0, 0)
        static var models: [any PersistentModel.Type] { [Wide.self, Leaf.self] }
        @Model final class Wide {
      \(fields)
        }
        @Model final class Leaf {
          @Relationship(deleteRule: .cascade) var owner: Wide?
        }
      }
      """
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("every-warning-\(getpid())")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    try text.write(to: folder.appendingPathComponent("Model.swift"), atomically: true, encoding: .utf8)
    let file = try parsed("devices a\nschema from \(folder.path)\n")
    let model = try ModelImporter.load(path: folder.path)
    #expect(Set(model.warnings.map(\.rule)) == ["no-action-rule", "child-delete-rule", "type-removed", "too-many-fields"])
    #expect(file.schema.safetyFindings().map(\.problem.rawValue) == model.warnings.map(\.rule))
    #expect(file.schema.safetyFindings().map(\.sentence).allSatisfy { !$0.isEmpty })
  }

  @Test func schemaFromSaysWhatIsWrong() {
    #expect(messages("devices iPad\nschema from /no/such/model\nsettle\n").joined().contains("cannot import the model"))
    #expect(messages("devices iPad\nschema /x\nsettle\n").joined().contains("expected 'from'"))
    #expect(messages("devices iPad\nschema from\nsettle\n").joined().contains("expected the path"))
  }

  @Test func orderedAndNoInverseAreReadWrittenBackAndCloudKitFindings() throws {
    let text = """
      devices iPad
      type Shelf
        name: string = ""
      type Book
        shelf: ref Shelf? on-delete cascade ordered
        author: ref Shelf? no-inverse
      at 0s iPad create Shelf s name="Top"
      at 1s iPad create Book b shelf=s
      settle
      """
    let file = try parsed(text)
    let book = file.schema.types[1]
    #expect(book.fields[0].ordered && book.fields[0].hasInverse)
    #expect(!book.fields[1].ordered && !book.fields[1].hasInverse)
    let rendered = file.rendered()
    #expect(rendered.contains("  shelf: ref Shelf? on-delete cascade ordered\n"), "\(rendered)")
    #expect(rendered.contains("  author: ref Shelf? no-inverse\n"), "\(rendered)")
    #expect(try parsed(rendered).schema == file.schema)
    let findings = file.schema.safetyFindings()
    #expect(findings.map(\.problem) == [.orderedRelationship, .missingInverse])
    #expect(findings[0].appleRule == "CloudKit integration does not support ordered relationships.")
    #expect(findings[1].appleRule == "All relationships must have an inverse.")
    #expect(file.schema.acceptsUploads(ofType: 0) && !file.schema.acceptsUploads(ofType: 1))
    // At run time the Book never leaves the iPad, as for every unsafe type.
    let report = ScenarioRunner.run(file).report
    #expect(report.counts[.strandedRecord] == 1, "\(report.text)")
    let stranded = try #require(report.anomalies.first { $0.kind == .strandedRecord })
    #expect(stranded.record?.name == "b")
    #expect(stranded.explanation.contains("ordered relationship"), "\(stranded.explanation)")
  }

  @Test func aDenyRuleIsACloudKitFindingWithApplesRule() throws {
    let file = try parsed(Self.text)
    let deny = try #require(file.schema.safetyFindings().first { $0.problem == .denyDeleteRule })
    #expect(deny.field == "owner")
    #expect(deny.appleRule == "CloudKit integration does not support the Deny deletion rule.")
    #expect(!file.schema.acceptsUploads(ofType: 1))
  }
}
