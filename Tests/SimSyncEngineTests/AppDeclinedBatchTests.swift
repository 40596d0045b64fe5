import Foundation
import Replica
import Scenarios
import Testing

@testable import SimSyncEngine

/// A delegate that gives no batch for its pending changes (a record provider that returns nil
/// for every record, as a public shared-database delegate does): the change never leaves the
/// device — a `stalled-sync` and a `lost-edit` — and the engine does not ask again after every
/// fetch for as long as the run lasts (it did: 36,811 messages before settle gave up).
@Suite struct AppDeclinedBatchTests {
  static let text = """
    devices iPad phone
    latency 100ms
    type Note
      title: string = "" mutable
    at 0s    iPad  create Note n1 title="t1"
    settle
    """

  @Test func anEngineGivenNoBatchDoesNotAskAgainAfterEveryFetch() throws {
    let file = try ScenarioParser.parse(Self.text, source: "declined.scenario").get()
    let report = ScenarioRunner.run(file, app: AppUnderTest(NotesAppGivingNoBatch.self)).report
    #expect(report.counts[.stalledSync] == 1, "\(report.text)")
    #expect(report.stats.messages < 200, "\(report.stats.messages) messages")
    let sent = ScenarioRunner.run(file, app: AppUnderTest(NotesApp.self)).report
    #expect(sent.violations.isEmpty, "\(sent.text)")
  }
}

/// Builds its batch from the pending changes with a record provider that returns nil.
final class NotesAppGivingNoBatch: NotesApp, @unchecked Sendable {
  override func nextRecordZoneChangeBatch(_ context: SyncEngine.SendChangesContext, syncEngine: SyncEngine) async
    -> SyncEngine.RecordZoneChangeBatch?
  {
    await SyncEngine.RecordZoneChangeBatch(pendingChanges: syncEngine.state.pendingRecordZoneChanges) { _ in nil }
  }
}
