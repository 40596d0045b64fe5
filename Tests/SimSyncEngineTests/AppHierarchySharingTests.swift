import Foundation
import Replica
import Scenarios
import SimTesting
import Testing

@testable import SimSyncEngine

/// An app's engines with a hierarchy share (`share S of ID`: ``SyncShare/rootRecordID``,
/// ``SyncRecord/parent``) and with zones of the scenario's (`create … in ZONE`, `share S in
/// ZONE`): ``SharingNotesApp`` runs them with no violation, and the planted sharing apps are still
/// caught on them.
@Suite struct AppHierarchySharingTests {
  static func run(_ text: String, _ app: any SimApp.Type) throws -> RunReport {
    ScenarioRunner.run(try ScenarioParser.parse(text, source: "test.scenario").get(), app: AppUnderTest(app)).report
  }

  /// Alice's lists and items (an item's list is its parent), Bob on the mac.
  static func lists(_ timeline: String) -> String {
    """
    scenario lists
    devices phone mac
    latency 100ms
    account alice phone
    account bob mac

    type List
      title: string = "" mutable
    type Item
      list: ref List? parent mutable
      text: string = "" mutable

    at 0s    phone  create List trip title="Packing"
    at 1s    phone  create List home title="Chores"
    at 5s    phone  create Item socks list=trip text="socks"
    at 6s    phone  create Item broom list=home text="broom"
    at 10s   phone  sync
    at 20s   phone  share packing of trip
    at 21s   phone  invite bob to packing read-write
    at 30s   mac    accept packing
    \(timeline)
    settle
    """
  }

  /// Alice's notes in zones `family` and `work` and in the app's zone; Bob on the mac.
  static func zones(_ timeline: String) -> String {
    """
    scenario zones
    devices iPad mac
    latency 100ms
    account alice iPad
    account bob mac

    type Note
      title: string = "" mutable

    at 0s    iPad  create Note dinner in family title="Dinner"
    at 1s    iPad  create Note budget in work title="Budget"
    at 2s    iPad  create Note diary title="Diary"
    \(timeline)
    settle
    """
  }

  static func passes(_ report: RunReport) {
    #expect(report.violations.isEmpty, "\(report.text)")
    #expect(report.converged, "\(report.text)")
    #expect(report.appErrors.isEmpty, "\(report.text)")
    #expect(report.appIntents?.refused.isEmpty == true, "\(report.text)")
  }

  /// The lesson of the parent's moved tag runs on the app (the system's sharing UI saves the
  /// share; the engine's stale root is the built-in engine's axis), and Bob's shared engine hears
  /// of the share of `trip` — named `share-trip`, in Alice's zone, with its root — then of the
  /// list and its item, whose `parent` is the list; never of the other list.
  @Test func aHierarchyShareComesWithItsRootAndTheChildsParent() throws {
    LoggingInTheHierarchy.log.lines = []
    let report = ScenarioRunner.run(try Scenario.load("share-after-child-saved"), app: AppUnderTest(LoggingInTheHierarchy.self)).report
    Self.passes(report)
    let iPad = LoggingInTheHierarchy.log.lines.filter { $0.contains(" iPad ") }
    #expect(
      iPad.contains { $0.hasPrefix("shared iPad share trip (Records@alice) share-trip alice:readWrite:owner bob:readWrite:privateUser") }, "\(iPad)")
    #expect(iPad.contains("shared iPad record trip (Records@alice)"), "\(iPad)")
    #expect(iPad.contains("shared iPad record socks (Records@alice) parent trip"), "\(iPad)")
    #expect(!iPad.contains { $0.contains("home") }, "\(iPad)")
  }

  /// Bob adds an item under the shared list (made in Alice's zone, with the list as its parent),
  /// Alice files an item of the other list under it and takes one out: Bob gets the one filed in
  /// and loses the one taken out (a deletion of that record; the zone stays), with nothing lost.
  @Test func aRecordMovedOutOfASharedHierarchyLeavesTheParticipant() throws {
    LoggingTheMove.log.lines = []
    let report = try Self.run(
      Self.lists(
        """
        at 40s   mac    create Item towel list=trip text="towel"
        at 50s   phone  set broom list=trip
        at 60s   phone  set socks list=home
        """), LoggingTheMove.self)
    Self.passes(report)
    let mac = LoggingTheMove.log.lines.filter { $0.contains(" mac ") }
    #expect(mac.contains("shared mac sent towel (Records@alice) parent trip"), "\(mac)")
    #expect(mac.contains("shared mac record broom (Records@alice) parent trip"), "\(mac)")
    #expect(mac.contains("shared mac record deleted socks (Records@alice)"), "\(mac)")
    #expect(!mac.contains { $0.contains("zone deleted") }, "\(mac)")
  }

  /// When Alice removes Bob, the zone leaves his shared database: the app that keeps revoked
  /// shares is caught; when Bob's permission drops while he edits offline, the app that ignores
  /// `permissionFailure` loses the edit.
  @Test func thePlantedSharingAppsAreCaughtOnAHierarchyShare() throws {
    let removed = Self.lists("at 60s   phone  remove bob from packing")
    Self.passes(try Self.run(removed, SharingNotesApp.self))
    #expect(try Self.run(removed, SharingNotesAppKeepingRevokedShares.self).counts[.accessLeak] >= 1)
    let dropped = Self.lists(
      """
      at 40s   offline mac
      at 45s   mac    set socks text="wool socks"
      at 50s   phone  permission packing bob read-only
      at 1m    online mac
      """)
    Self.passes(try Self.run(dropped, SharingNotesApp.self))
    let lost = try Self.run(dropped, SharingNotesAppIgnoringPermissionFailure.self)
    #expect(lost.counts[.lostEdit] == 1, "\(lost.text)")
  }

  /// A share of zone `family` is handed over as a share of that zone alone (`family@alice`, the
  /// zone-wide record name); Alice's own app has her notes in their zones; Bob sees the family's
  /// notes, edits one, and loses them when Alice stops sharing.
  @Test func aShareOfANamedZoneComesAsAShareOfThatZone() throws {
    LoggingTheZone.log.lines = []
    let text = Self.zones(
      """
      at 9s    iPad  share home in family
      at 10s   iPad  invite bob to home read-write
      at 11s   mac   accept home
      at 20s   iPad  create Note dessert in family title="Dessert"
      at 21s   iPad  create Note q3 in work title="Q3"
      at 30s   mac   set dinner title="Dinner at 8"
      at 50s   iPad  unshare home
      """)
    let report = try Self.run(text, LoggingTheZone.self)
    Self.passes(report)
    let lines = LoggingTheZone.log.lines
    let mac = lines.filter { $0.contains(" mac ") }
    #expect(mac.contains { $0.hasPrefix("shared mac share family@alice cloudkit.zoneshare alice:readWrite:owner") }, "\(mac)")
    #expect(mac.contains("shared mac record dinner (family@alice)"), "\(mac)")
    #expect(mac.contains("shared mac record dessert (family@alice)"), "\(mac)")
    #expect(!mac.contains { $0.contains("budget") || $0.contains("diary") || $0.contains("q3") }, "\(mac)")
    #expect(mac.contains("shared mac zone deleted family@alice"), "\(mac)")
    #expect(lines.contains("private iPad record dinner (family)"), "\(lines)")
    #expect(try Self.run(text, SharingNotesAppKeepingRevokedShares.self).counts[.accessLeak] >= 1)
  }

  @Test func anAppWithHierarchiesAndZonesIsDeterministic() throws {
    let file = try ScenarioParser.parse(Self.lists("at 50s   phone  set broom list=trip"), source: "test.scenario").get()
    let check = ScenarioRunner.checkDeterminism(file, app: SharingNotesApp.self)
    #expect(check.deterministic, "\(check.text)")
  }
}

/// The logging sharing app, one log per test (the tests run side by side).
final class LoggingInTheHierarchy: SharingNotesAppLoggingEvents, @unchecked Sendable {
  static let own = SharingEventLog()
  override class var log: SharingEventLog { own }
}

final class LoggingTheMove: SharingNotesAppLoggingEvents, @unchecked Sendable {
  static let own = SharingEventLog()
  override class var log: SharingEventLog { own }
}

final class LoggingTheZone: SharingNotesAppLoggingEvents, @unchecked Sendable {
  static let own = SharingEventLog()
  override class var log: SharingEventLog { own }
}
