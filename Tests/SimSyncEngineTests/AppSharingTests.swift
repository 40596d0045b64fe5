import Foundation
import Replica
import Scenarios
import SimTesting
import Testing

@testable import SimSyncEngine

/// An app's own engines with sharing: one `SyncEngine` per database, the shared one fetching
/// the zones other accounts share, their `CKShare` (``SyncShare``), and the zone's deletion when
/// access ends. The sharing lessons run on ``SharingNotesApp`` with no violation; the planted
/// apps beside it are caught.
@Suite struct AppSharingTests {
  static let lessons = [
    "participant-removed", "read-only-edit-shown-saved", "permission-dropped-offline", "unshared-while-offline",
    "left-share-on-other-device", "shared-after-switch", "read-only-never-updated", "guest-echoes-owner-change",
    "share-accepted-again", "accepted-share-not-fetched",
  ]

  static func run(_ lesson: String, _ app: any SimApp.Type) throws -> RunReport {
    ScenarioRunner.run(try Scenario.load(lesson), app: AppUnderTest(app)).report
  }

  /// The planted sharing apps, the lesson that catches each, the kind it reports there, and the
  /// first seed of `fuzz --app NAME --sharing` it fails (the CHANGELOG's figures).
  static let planted: [(app: any SimApp.Type, lesson: String, kind: AnomalyKind, firstFailingSeed: UInt64)] = [
    (SharingNotesAppKeepingRevokedShares.self, "participant-removed", .accessLeak, 9),
    (SharingNotesAppIgnoringPermissionFailure.self, "permission-dropped-offline", .lostEdit, 118),
  ]

  /// `swift test` checks the first failing seed fails; the nightly run (`SIM_NIGHTLY=1`) checks
  /// every seed from 1, so that it is the first.
  @Test(arguments: planted.indices)
  func aPlantedSharingAppIsCaughtByFuzzingWithSharing(index: Int) throws {
    let bug = Self.planted[index]
    let report = try Self.run(bug.lesson, bug.app)
    #expect(report.counts[bug.kind] >= 1, "\(bug.app) on \(bug.lesson):\n\(report.text)")
    var shape = WorkloadShape()
    shape.sharing = true
    let from = ProcessInfo.processInfo.environment["SIM_NIGHTLY"] == "1" ? 1 : bug.firstFailingSeed
    let summary = fuzz(app: bug.app, seeds: from...bug.firstFailingSeed, shape: shape, shrinkRuns: 0)
    #expect(summary.failingSeeds == [bug.firstFailingSeed], "\(bug.app)")
  }

  @Test(arguments: lessons)
  func everySharingLessonPassesOnTheAppThatShares(_ lesson: String) throws {
    let report = try Self.run(lesson, SharingNotesApp.self)
    #expect(report.violations.isEmpty, "\(report.text)")
    #expect(report.converged, "\(report.text)")
    #expect(report.appErrors.isEmpty, "\(report.text)")
  }

  /// An app that ignores the shared zone's deletion keeps the owner's notes after it was removed
  /// from the share, or after the owner stopped sharing.
  @Test func anAppThatKeepsRevokedSharesIsCaughtAsAnAccessLeak() throws {
    for lesson in ["participant-removed", "unshared-while-offline", "left-share-on-other-device"] {
      let report = try Self.run(lesson, SharingNotesAppKeepingRevokedShares.self)
      #expect(report.counts[.accessLeak] >= 1, "\(lesson): \(report.text)")
      #expect(report.text.contains("kept showing its copies"), "\(lesson): \(report.text)")
    }
  }

  /// An app that drops a change refused with `permissionFailure` and keeps showing it loses the
  /// edit, and the report names the refusal; the app that takes the server's copy back loses
  /// nothing.
  @Test func anAppThatIgnoresPermissionFailureIsCaughtAsALostEdit() throws {
    let report = try Self.run("permission-dropped-offline", SharingNotesAppIgnoringPermissionFailure.self)
    #expect(report.counts[.lostEdit] == 1, "\(report.text)")
    #expect(report.text.contains("permissionFailure"), "\(report.text)")
  }

  /// The app stops the user editing a share its `CKShare` says is read-only: the intent is not
  /// made, and not counted against the app.
  @Test func aReadOnlyShareIsNotEditedAndTheRefusalIsExpected() throws {
    let report = try Self.run("read-only-edit-shown-saved", SharingNotesApp.self)
    #expect(report.appIntents?.refused.isEmpty == true, "\(report.text)")
    #expect(report.text.contains("their share is read-only for bob (its CKShare says so)"), "\(report.text)")
  }

  /// What each engine hears: the private one never a shared record; the shared one the owner's
  /// zone (owner `alice`) with its share first, the participant's permission in it, and the
  /// zone's deletion when the owner removes the participant.
  @Test func theSharedEngineSeesTheOwnersZoneAndItsShareAndThePrivateOneDoesNot() throws {
    SharingEventLog.shared.lines = []
    let report = try Self.run("participant-removed", SharingNotesAppLoggingEvents.self)
    #expect(report.violations.isEmpty, "\(report.text)")
    let lines = SharingEventLog.shared.lines
    #expect(!lines.contains { $0.hasPrefix("private") && $0.contains("@alice") }, "\(lines)")
    let mac = lines.filter { $0.contains(" mac ") }
    #expect(
      mac.contains("shared mac share Records@alice cloudkit.zoneshare alice:readWrite:owner bob:readWrite:privateUser me=bob:readWrite"), "\(mac)")
    #expect(mac.contains("shared mac record n1 (Records@alice)"), "\(mac)")
    #expect(mac.contains("shared mac zone deleted Records@alice"), "\(mac)")
    let share = mac.firstIndex { $0.contains("share Records@alice") } ?? .max
    let record = mac.firstIndex { $0.contains("record n1") } ?? .min
    #expect(share < record, "the share comes before the zone's records: \(mac)")
  }

  /// An app that does not say it shares cannot run a scenario that shares: the run fails and
  /// says what to do.
  @Test func anAppThatDoesNotShareIsToldWhy() throws {
    let report = try Self.run("participant-removed", NotesApp.self)
    #expect(!report.passed)
    #expect(report.appErrors.first?.contains("does not say it shares (SimApp.sharesRecords is false)") == true, "\(report.appErrors)")
  }

  @Test func anAppThatSharesIsDeterministic() throws {
    let check = ScenarioRunner.checkDeterminism(try Scenario.load("permission-dropped-offline"), app: SharingNotesApp.self)
    #expect(check.deterministic, "\(check.text)")
  }
}

/// What the sharing app's engines heard, by the test above (one run at a time).
final class SharingEventLog: @unchecked Sendable {
  static let shared = SharingEventLog()
  var lines: [String] = []
}

/// The sharing app, writing down the zones each engine hears of.
class SharingNotesAppLoggingEvents: SharingNotesApp, @unchecked Sendable {
  /// Where it writes (a test that runs beside another that logs uses a subclass of its own).
  class var log: SharingEventLog { SharingEventLog.shared }

  static func parent(_ record: SyncRecord) -> String { record.parent.map { " parent \($0.recordID.recordName)" } ?? "" }

  override func handleEvent(_ event: SyncEngine.Event, syncEngine: SyncEngine) async {
    let scope = "\(syncEngine.database.databaseScope) \(device.name)"
    switch event {
    case .fetchedRecordZoneChanges(let changes):
      for m in changes.modifications {
        if let share = m.record as? SyncShare {
          let people = share.participants.map { "\($0.userName):\($0.permission):\($0.role)" }.joined(separator: " ")
          let me = share.currentUserParticipant.map { "\($0.userName):\($0.permission)" } ?? "none"
          let what = share.rootRecordID.map { "\($0)" } ?? "\(share.recordID.zoneID)"
          Self.log.lines.append("\(scope) share \(what) \(share.recordID.recordName) \(people) me=\(me)")
        } else {
          Self.log.lines.append("\(scope) record \(m.record.recordID)" + Self.parent(m.record))
        }
      }
      for d in changes.deletions { Self.log.lines.append("\(scope) record deleted \(d.recordID)") }
    case .sentRecordZoneChanges(let sent):
      for r in sent.savedRecords { Self.log.lines.append("\(scope) sent \(r.recordID)" + Self.parent(r)) }
    case .fetchedDatabaseChanges(let changes):
      for d in changes.deletions { Self.log.lines.append("\(scope) zone deleted \(d.zoneID)") }
    default:
      break
    }
    await super.handleEvent(event, syncEngine: syncEngine)
  }
}
