import Foundation
import Replica
@_spi(Kernel) import Scenarios
import SimTesting
import Testing

@testable import SimSyncEngine

/// What the report says of an app: a change its code never sent is a lost edit that names why it
/// never left (not persisted before a kill, cleared while its batch was out, dropped after a
/// CloudKit error) — never a stale overwrite; the planted apps do what their docs say; the
/// minimal scenario of an app has no policy line; `explain` names no preset axis.
@Suite struct TruthfulSentenceTests {
  static func run(_ text: String, _ app: any SimApp.Type) throws -> RunReport {
    ScenarioRunner.run(try ScenarioParser.parse(text, source: "sentence.scenario").get(), app: AppUnderTest(app)).report
  }

  static let header = """
    devices iPad phone
    latency 100ms
    autosync off
    push off
    type Note
      title: string = "" mutable
      body: text = ""

    """

  @Test func aChangeNotPersistedBeforeAKillIsALostEditThatSaysSo() throws {
    let text =
      Self.header
      + "at 0s iPad create Note n1 title=\"t0\" body=\"w0\"\nat 1s iPad sync\nat 2s phone sync\nat 3s offline iPad\nat 4s iPad set n1 title=\"t4\"\nat 6s iPad kill\nat 7s online iPad\nat 8s iPad sync\nsettle"
    let report = try Self.run(text, NotesAppNotPersistingState.self)
    #expect(report.count(.staleOverwrite) == 0)
    #expect(report.count(.lostEdit) == 1, "\(report.text)")
    #expect(report.violations.first { $0.kind == .lostEdit }?.explanation.contains("never reached the server — the app was killed at 6.000s") == true)
    #expect(try Self.run(text, NotesApp.self).passed)
  }

  @Test func anEditClearedWhileItsBatchWasOutIsALostEditThatSaysSo() throws {
    let text =
      Self.header
      + "at 0s iPad create Note n1 title=\"a0\" body=\"w0\"\nat 1s iPad sync\nat 1.05s iPad append n1.body \" k1\"\nat 3s iPad sync\nsettle"
    let report = try Self.run(text, NotesAppClearingInFlightEdits.self)
    #expect(report.count(.staleOverwrite) == 0)
    #expect(report.count(.lostEdit) == 1, "\(report.text)")
    #expect(report.violations.first { $0.kind == .lostEdit }?.explanation.contains("took the acknowledgement of an earlier save") == true)
  }

  @Test func aChangeDroppedAfterAnErrorNamesTheError() throws {
    let text =
      Self.header
      + "at 0s iPad create Note n1 title=\"a\"\nat 1s iPad sync\nat 5s reject n1 with zoneBusy retry-after 5s for 5s\nat 6s iPad set n1 title=\"b\"\nat 6.5s iPad sync\nsettle"
    let report = try Self.run(text, NotesAppGivingUpOnTransientErrors.self)
    #expect(
      report.violations.first { $0.kind == .lostEdit }?.explanation.contains("dropped its pending change after zoneBusy") == true, "\(report.text)")
  }

  /// The planted app that overwrites pending edits overwrites a pending append too.
  @Test func theOverwritingAppOverwritesAPendingAppend() throws {
    let text =
      Self.header
      + "at 0s iPad create Note n1 title=\"t0\" body=\"w0\"\nat 1s iPad sync\nat 2s phone sync\nat 3s offline iPad\nat 4s iPad append n1.body \" q4\"\nat 5s phone set n1 title=\"t5\"\nat 5s phone sync\nat 8s online iPad\nat 8s iPad sync\nat 9s iPad sync\nsettle"
    let report = try Self.run(text, NotesAppOverwritingPendingEdits.self)
    #expect(report.count(.lostEdit) == 1, "\(report.text)")
    #expect(report.violations.first?.field?.name == "body")
  }

  /// A fuzz failure of an app: a minimal scenario with no policy line, made by the tool that
  /// runs it whatever thread shrank it, and `explain` naming the app's code, not a preset.
  @Test func aShrunkAppScenarioHasNoPolicyLineAndNamesTheTool() throws {
    let campaign = FuzzCampaign(
      shape: WorkloadShape(), app: AppUnderTest(NotesAppOverwritingPendingEdits.self), seeds: SeedPlan(lower: 1, upper: 2), jobs: 2)
    let outcomes = OutcomeBox()
    ToolName.$current.withValue("notes-sim") { campaign.run { outcomes.add($0) } }
    let shrunk = try #require(outcomes.all.compactMap(\.shrunk).first)
    #expect(!shrunk.text.contains("\npolicy "))
    #expect(shrunk.file.about?.hasPrefix("Shrunk by notes-sim") == true)
    #expect(shrunk.violations.contains { $0.kind == shrunk.kind })
    let result = ScenarioRunner.run(shrunk.file, app: AppUnderTest(NotesAppOverwritingPendingEdits.self), keepEvents: true)
    let story = Explanation.render(result)
    #expect(story.contains("its code is the policy"))
    #expect(!story.contains("policy settings:"))
    #expect(!story.contains("hlc"))
  }

  /// An app that declares a delete rule carries it out itself; the cascades it makes are the
  /// rule's intents, and one that does not is caught.
  @Test func anAppCarriesOutItsOwnDeleteRules() throws {
    let lesson = try Scenario.load("app-list-deleted")
    let report = ScenarioRunner.run(lesson, app: AppUnderTest(RemindersApp.self)).report
    #expect(report.passed, "\(report.text)")
    let missing = ScenarioRunner.run(lesson, app: AppUnderTest(RemindersAppNotCascading.self)).report
    #expect(missing.count(.danglingReference) >= 1, "\(missing.text)")
  }
}

/// Outcomes collected from a campaign (emitted one at a time).
final class OutcomeBox: @unchecked Sendable {
  private let lock = NSLock()
  private var outcomes: [FuzzOutcome] = []
  func add(_ o: FuzzOutcome) -> Bool {
    lock.withLock { outcomes.append(o) }
    return true
  }
  var all: [FuzzOutcome] { lock.withLock { outcomes } }
}
