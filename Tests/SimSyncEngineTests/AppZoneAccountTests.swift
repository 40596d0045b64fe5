import Foundation
import Replica
import Scenarios
import Testing

@testable import SimSyncEngine

/// Zone deletions and iCloud account changes on a user's app's devices: the engine delivers
/// `fetchedDatabaseChanges` and `accountChange`, the reference app reacts correctly, and the
/// planted apps that do not are caught.
@Suite struct AppZoneAccountTests {
  static func run(_ text: String, _ app: any SimApp.Type = NotesApp.self) throws -> RunReport {
    ScenarioRunner.run(try ScenarioParser.parse(text, source: "zone.scenario").get(), app: AppUnderTest(app)).report
  }

  static let twoNotes = """
    devices iPad phone
    latency 100ms
    type Note
      title: string = "" mutable
    at 0s    iPad  create Note n1 title="t1"
    at 1s    iPad  create Note n2 title="t2"
    at 5s    sync
    """

  /// A purge in Settings: every device of the account hears of it at its next request, the one
  /// it was made on too, and drops what was in the zone.
  @Test func aPurgeReachesEveryDeviceAndTheRowsGo() throws {
    let report = try Self.run(
      Self.twoNotes
        + "\nat 20s phone purge-zone\nat 25s phone create Note n3 title=\"t3\"\nsettle\nexpect n1 deleted\nexpect n2 deleted\nexpect n3 exists")
    #expect(report.passed, "\(report.text)")
    #expect(report.converged)
    #expect(report.notSimulated.isEmpty)
    let ignoring = try Self.run(Self.twoNotes + "\nat 20s phone purge-zone\nsettle", NotesAppIgnoringZoneDeletions.self)
    #expect(ignoring.counts[.resurrection] >= 1 || ignoring.counts[.divergence] >= 1, "\(ignoring.text)")
  }

  /// An encrypted-data reset empties the server without deleting anything: the app uploads every
  /// row again, and nothing is lost; an app that drops its rows instead loses them.
  @Test func anEncryptedDataResetIsAnsweredByUploadingEverythingAgain() throws {
    let text = Self.twoNotes + "\nat 20s encrypted-data-reset\nat 30s phone set n1 title=\"t4\"\nsettle\nexpect n1.title == \"t4\"\nexpect n2 exists"
    let report = try Self.run(text)
    #expect(report.passed, "\(report.text)")
    let dropping = try Self.run(text, NotesAppDroppingRowsOnReset.self)
    #expect(dropping.counts[.lostEdit] >= 1, "\(dropping.text)")
  }

  /// The app that deletes its zone drops everything it shows, sent or not; the other device
  /// keeps what it never sent.
  @Test func theDeviceThatDeletesItsZoneDropsEverything() throws {
    let text =
      Self.twoNotes
      + "\nat 10s offline iPad phone\nat 11s iPad create Note n3 title=\"t3\"\nat 12s phone create Note n4 title=\"t4\"\nat 20s iPad delete-zone\nat 30s online iPad phone\nsettle\nexpect n3 deleted\nexpect n4 exists\nexpect n1 deleted"
    let report = try Self.run(text)
    #expect(report.passed, "\(report.text)")
    #expect(report.converged)
  }

  /// A switch to another account and back (the named `account-switch-offline`, written for a
  /// preset): what was set aside with the first account is sent when it signs in again.
  @Test func anAccountSwitchSetsTheDataAsideAndBringsItBack() throws {
    let file = try Scenario.load("account-switch-offline")
    let report = ScenarioRunner.run(file, app: NotesApp.self).report
    #expect(report.violations.isEmpty, "\(report.text)")
    #expect(report.converged)
    let wiping = ScenarioRunner.run(file, app: NotesAppWipingOnSignOut.self).report
    #expect(wiping.counts[.lostEdit] >= 2, "\(wiping.text)")
    #expect(wiping.text.contains("the app's code on its device dropped this change"), "\(wiping.text)")
  }

  /// An app killed before its device signs out hears of the change when it is launched again,
  /// with what its engine's state on disk had pending: the app that wipes its rows then loses
  /// those changes, and the sentence says so (it said nothing of the account change, as the
  /// Apple sample's port found: "never deleted, yet no device holds it").
  @Test func anAppKilledBeforeASignOutLosesItsPendingChangesWithTheReason() throws {
    let text = """
      devices iPad phone
      latency 100ms
      type Note
        title: string = "" mutable
      at 0s    offline iPad
      at 1s    iPad  create Note n1 title="t1"
      at 3s    iPad  kill
      at 4s    iPad  sign-out
      at 8s    iPad  sign-in icloud
      at 9s    online iPad
      settle
      expect n1 exists
      """
    let report = try Self.run(text)
    #expect(report.passed, "\(report.text)")
    let wiping = try Self.run(text, NotesAppWipingOnSignOut.self)
    #expect(wiping.counts[.lostEdit] == 1, "\(wiping.text)")
    #expect(wiping.text.contains("on an iCloud account change"), "\(wiping.text)")
  }

  /// A signed-out device syncs nothing; what it made meanwhile is sent to the account it signs
  /// into, and the app hears `signOut` and `signIn` with the account's name.
  @Test func aSignedOutDeviceSendsWhatItMadeWhenItSignsIn() throws {
    let text = """
      devices iPad phone
      latency 100ms
      account alice
      type Note
        title: string = "" mutable
      at 0s    iPad  create Note n1 title="t1"
      at 0.5s  phone sign-out
      at 1s    phone create Note n2 title="t2"
      at 30s   phone sign-in alice
      settle
      expect n1 exists
      expect n2 exists
      """
    let report = try Self.run(text, NotesAppRecordingAccountChanges.self)
    #expect(report.passed, "\(report.text)")
    #expect(report.converged)
    #expect(NotesAppRecordingAccountChanges.seen.all == ["phone: signOut(previousUser: \"alice\")", "phone: signIn(currentUser: \"alice\")"])
  }

  static let signOutAfterIgnoredDelete = """
    devices iPad phone mac watch
    seed 81348
    latency 30ms
    loss 10%
    duplicate 3%
    type Note
      title: string = "" mutable
      tag: string = "" mutable
      body: text = "" mutable
    at 487ms phone sync
    at 1.18s watch create Note n16
    at 3.57s iPad create Note n23
    at 4.91s mac delete n23
    at 5.252s watch append n16.body " +36;"
    at 16.358s iPad sign-out
    at 20.732s iPad sign-in icloud
    """

  /// The nightly's `fuzz --app NotesApp` seed 81348, shrunk. iPad's save of n23 reaches the
  /// server but its answer is lost; mac deletes n23; iPad fetches the deletion and ignores it (the
  /// note has no system fields and a save is pending, which the app reads as a note made again
  /// under the name), so n23 disappears there only when the user signs out, and shows again at
  /// the sign-in. It went with the account, not with the delete: no transient resurrection
  /// (both oracles called it one until a record hidden at an account change stopped counting as
  /// vanished).
  @Test func aNoteHiddenAtASignOutIsNoResurrectionWhenTheSignInShowsItAgain() throws {
    let report = try Self.run(Self.signOutAfterIgnoredDelete)
    #expect(report.counts.total == 0, "\(report.text)")
  }
}

/// Drops every row on an encrypted-data reset, as on a deletion: what only the server had lost
/// with it is gone.
final class NotesAppDroppingRowsOnReset: NotesApp, @unchecked Sendable {
  override func zoneDeleted(_ reason: SyncEngine.Event.FetchedDatabaseChanges.Reason, syncEngine: SyncEngine) {
    super.zoneDeleted(reason == .encryptedDataReset ? .deleted : reason, syncEngine: syncEngine)
  }
}

/// The reference app, noting every account change it hears of.
final class NotesAppRecordingAccountChanges: NotesApp, @unchecked Sendable {
  static let seen = Seen()
  override func accountChanged(_ change: SyncEngine.Event.AccountChange) {
    Self.seen.append("\(device.name): \(change.changeType)")
    super.accountChanged(change)
  }

  final class Seen: @unchecked Sendable {
    let lock = NSLock()
    var lines: [String] = []
    func append(_ line: String) { lock.withLock { lines.append(line) } }
    var all: [String] { lock.withLock { lines } }
  }
}
