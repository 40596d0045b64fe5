import Foundation
import Replica
import Scenarios
import Testing

@testable import SimSyncEngine

/// Text fields on a user's app's devices: appends reach the app, what it shows is read back
/// piece by piece, and the oracle judges each append as it does for the presets — in both
/// directions.
@Suite struct AppTextTests {
  static let text = """
    devices iPad phone
    latency 100ms
    type Note
      title: string = "" mutable
      body: text = ""
    at 0s    iPad  create Note n1 title="t1" body="milk"
    at 2s    offline iPad phone
    at 3s    iPad  append n1.body " eggs;"
    at 4s    phone append n1.body " bread;"
    at 5s    phone append n1.body " tea;"
    at 10s   online iPad
    at 12s   online phone
    settle
    expect n1.body in "milk eggs; bread; tea;" "milk bread; tea; eggs;"
    """

  func file() throws -> ScenarioFile { try ScenarioParser.parse(Self.text, source: "appends.scenario").get() }

  @Test func theReferenceAppKeepsBothDevicesAppends() throws {
    let report = ScenarioRunner.run(try file(), app: NotesApp.self).report
    #expect(report.passed, "\(report.text)")
    #expect(report.converged)
    #expect(report.ignored.isEmpty, "\(report.ignored)")
  }

  @Test func anAppKeepingOneDevicesWholeTextLosesTheOthersAppends() throws {
    let report = ScenarioRunner.run(try file(), app: NotesAppKeepingOneDevicesText.self).report
    #expect(!report.passed)
    let lost = report.violations.filter { $0.kind == .lostEdit }
    #expect(!lost.isEmpty, "\(report.text)")
    #expect(lost.allSatisfy { $0.explanation.contains("append") }, "\(report.text)")
  }

  @Test func anAppendAppliedTwiceIsADuplicateEvent() throws {
    let report = ScenarioRunner.run(try file(), app: NotesAppAppendingTwice.self).report
    #expect(report.violations.contains { $0.kind == .duplicateEvent }, "\(report.text)")
  }

  @Test func anAppendTheAppDropsIsLost() throws {
    let report = ScenarioRunner.run(try file(), app: NotesAppDroppingAppends.self).report
    #expect(report.violations.contains { $0.kind == .lostEdit }, "\(report.text)")
  }

  /// A replacement is not simulated for an app: it is ignored, and the report says why.
  @Test func aReplacementIsIgnoredAndSaysSo() throws {
    let text = Self.text.replacingOccurrences(
      of: "at 5s    phone append n1.body \" tea;\"", with: "at 5s    phone replace n1.body \"milk\" \"oat milk\"")
    let report = ScenarioRunner.run(try ScenarioParser.parse(text, source: "replace.scenario").get(), app: NotesApp.self).report
    #expect(report.ignored.contains { $0.contains("replacements are not yet simulated") }, "\(report.ignored)")
  }

  /// Reading a shown text back: the longest known piece at each place is its intent's, with
  /// offsets from 0; characters no piece explains are intent 0's, each with its own offset; a
  /// piece shown twice repeats its ids (what the oracle calls a duplicate).
  @Test func aShownTextIsReadBackPieceByPiece() {
    let registry = ProvenanceRegistry()
    registry.wrote("v5", to: 2, of: 0, by: 5)
    registry.wrote(" +1;", to: 2, of: 0, by: 7)
    registry.wrote(" +12;", to: 2, of: 0, by: 9)
    let (text, writer) = registry.text("v5 +12;?? +1;!", field: 2, of: 0)
    #expect(text.string == "v5 +12;?? +1;!")
    #expect(writer == 7)
    let ids = text.atoms.map { "\($0.id.intent).\($0.id.offset)" }
    #expect(ids == ["5.0", "5.1", "9.0", "9.1", "9.2", "9.3", "9.4", "0.0", "0.1", "7.0", "7.1", "7.2", "7.3", "0.2"])
    #expect(TextAtomStates(text).duplicates.isEmpty)
    let (twice, _) = registry.text("v5 +1; +1;", field: 2, of: 0)
    #expect(TextAtomStates(twice).duplicates.map(\.intent) == [7, 7, 7, 7])
    // Another field of the record, or another record, has pieces of its own.
    #expect(registry.text("v5", field: 1, of: 0).0.atoms.allSatisfy { $0.id.intent == 0 })
  }
}

/// Applies every append twice (a handler that runs on a retried event without checking).
final class NotesAppAppendingTwice: NotesApp, @unchecked Sendable {
  override func append(_ text: String, to f: String, in row: inout Row) {
    super.append(text, to: f, in: &row)
    super.append(text, to: f, in: &row)
  }
}

/// Says it made an append and does not.
final class NotesAppDroppingAppends: NotesApp, @unchecked Sendable {
  override func append(_ text: String, to f: String, in row: inout Row) {}
}
