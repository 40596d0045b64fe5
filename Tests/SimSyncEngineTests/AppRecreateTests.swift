import Foundation
import ReferenceOracle
import Replica
import Scenarios
import Testing

@testable import SimSyncEngine

/// A record deleted and created again under its name (an app that names records after their
/// content does it): the parser, the built-in engine, the server, both oracles and the reference
/// app take the new record as another incarnation; the app that coalesces the re-insert into
/// the delete is caught.
@Suite struct AppRecreateTests {
  static func parse(_ text: String) throws -> ScenarioFile { try ScenarioParser.parse(text, source: "recreate.scenario").get() }

  static func run(_ text: String, _ app: any SimApp.Type = NotesApp.self) throws -> RunReport {
    ScenarioRunner.run(try parse(text), app: AppUnderTest(app)).report
  }

  static let header = """
    devices iPad phone
    policy field-lww-hlc
    latency 100ms
    type Note
      title: string = "" mutable
    type Tag
      name: string = ""
    at 0s    phone create Note n1 title="t1"
    at 5s    sync
    """

  /// A create of an id is refused unless a delete of it comes before it in time, and a re-create
  /// keeps the type.
  @Test func theParserTakesACreateAgainOnlyAfterADelete() throws {
    #expect(throws: Never.self) { try Self.parse(Self.header + "\nat 10s phone delete n1\nat 11s phone create Note n1 title=\"t2\"") }
    let early = ScenarioParser.parse(Self.header + "\nat 11s phone create Note n1 title=\"t2\"\nat 12s phone delete n1", source: "r")
    guard case .failure(let errors) = early else {
      Issue.record("a create before the delete parsed")
      return
    }
    #expect(
      errors.diagnostics.map(\.message) == [
        "record 'n1' is already created on line 8 and not deleted in between; an id is created again only after a delete of it"
      ])
    let retyped = ScenarioParser.parse(Self.header + "\nat 10s phone delete n1\nat 11s phone create Tag n1", source: "r")
    guard case .failure(let typeErrors) = retyped else {
      Issue.record("a re-create as another type parsed")
      return
    }
    #expect(typeErrors.diagnostics.map(\.message) == ["record 'n1' is re-created as Tag; it was a Note (line 8)"])
  }

  /// Under every preset: the phone's re-create replaces the deleted note on the server, the
  /// iPad's late edit of the deleted one is refused, and the iPad takes the new note.
  @Test(arguments: ["field-lww-hlc", "cloudkit-default", "crdt", "sync-engine-merge", "hard-delete"])
  func theBuiltInEngineTakesTheNewIncarnation(policy: String) throws {
    let file = try Scenario.load("recreated-record")
    let result = ScenarioRunner.run(file, seed: 1, policy: try PolicySpec.parse(policy).get(), recordObservations: true)
    #expect(result.report.passed, "\(result.report.text)")
    #expect(result.report.converged)
    #expect(
      ReferenceOracle.judge(result.world)
        == result.report.anomalies.map { ReferenceVerdict(kind: $0.kind.rawValue, record: $0.record?.key, field: $0.field?.index) }.sorted())
  }

  /// A device that has not seen the record deleted cannot make it again: the intent is ignored,
  /// and said so.
  @Test func aCreateOnADeviceThatHasNotSeenTheDeleteIsIgnored() throws {
    let report = ScenarioRunner.run(
      try Self.parse(Self.header + "\nat 6s offline iPad\nat 8s phone delete n1\nat 10s iPad create Note n1 title=\"t2\"\nat 20s online iPad\nsettle")
    ).report
    #expect(report.ignored.count == 1, "\(report.text)")
    #expect(report.ignored.first?.contains("it still exists on this device") == true, "\(report.text)")
    #expect(report.passed)
  }

  /// Two devices that each made the record again, neither knowing of the other: one is kept,
  /// and the oracle says so without calling it a loss.
  @Test func twoRecreatesAtOnceAreAChoiceNotALoss() throws {
    let text =
      Self.header
      + "\nat 8s phone delete n1\nat 10s sync\nat 11s offline iPad phone\nat 12s phone create Note n1 title=\"phone's\"\nat 13s iPad create Note n1 title=\"iPad's\"\nat 20s online iPad phone\nsettle\nexpect n1 exists\nexpect converged"
    // (Both saw the delete before going offline; each makes the note again.)
    let report = try Self.run(text)
    #expect(report.passed, "\(report.text)")
    #expect(report.counts[.concurrentOverwrite] == 1, "\(report.text)")
    let builtIn = ScenarioRunner.run(try Self.parse(text)).report
    #expect(builtIn.passed, "\(builtIn.text)")
    #expect(builtIn.counts[.concurrentOverwrite] == 1, "\(builtIn.text)")
  }

  /// The reference app keeps the note made again while its delete was pending; the app whose
  /// outbox lets the delete win loses it.
  @Test func aReinsertCoalescedIntoTheDeleteIsCaught() throws {
    let text = try #require(Scenario.builtInText("app-reinserted-note"))
    #expect(try Self.run(text).passed)
    let planted = try Self.run(text, NotesAppCoalescingReinserts.self)
    #expect(!planted.passed)
    #expect(planted.counts[.lostEdit] + planted.counts[.strandedRecord] >= 1, "\(planted.text)")
  }

  /// An app that takes a copy of the deleted note for the one made again (no creation stamp)
  /// keeps the iPad's edit of the deleted note, whose version is newer than the phone's create:
  /// caught.
  @Test func anAppThatCannotTellTheIncarnationsApartIsCaught() throws {
    let text = """
      devices iPad phone
      policy field-lww-hlc
      latency 100ms
      type Note
        title: string = "" mutable
      at 0s    phone create Note n1 title="t1"
      at 0s    iPad  create Note n2 title="u1"
      at 5s    sync
      at 6s    offline phone
      at 7s    iPad  set n2 title="u2"
      at 8s    iPad  set n2 title="u3"
      at 9s    iPad  set n1 title="iPad's edit"
      at 10s   phone delete n1
      at 11s   phone create Note n1 title="made again"
      at 20s   online phone
      settle
      expect n1.title == "made again"
      """
    let report = try Self.run(text)
    #expect(report.passed, "\(report.text)")
    #expect(report.counts[.deleteUpdateConflict] == 1, "\(report.text)")
    let blind = try Self.run(text, NotesAppBlindToRecreates.self)
    #expect(!blind.passed, "\(blind.text)")
  }
}

/// Test-only: a notes app that does not keep the version of a note's create, so it takes any
/// copy of a name for the same note.
final class NotesAppBlindToRecreates: NotesApp, @unchecked Sendable {
  override func merge(_ server: SyncRecord) {
    server.fields[Self.createdKey] = nil
    for name in rows.keys { rows[name]?.created = nil }
    super.merge(server)
  }
}
