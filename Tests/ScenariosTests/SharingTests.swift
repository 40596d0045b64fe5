import Replica
@_spi(Kernel) import Simulator
import Testing

@testable import Scenarios

/// Sharing (`cloudkit-model.md#sharing`): the statements, the server's access checks, the
/// engine's reactions, and `access-leak`.
@Suite struct SharingTests {
  /// Alice's iPad and Bob's Mac; `extra` lines go at the end of the timeline, before settle.
  static func file(_ timeline: String, policy: String = "field-lww-hlc") -> String {
    """
    scenario sharing
    devices iPad mac
    policy \(policy)
    latency 100ms
    account alice iPad
    account bob mac
    account carol

    type Note
      title: string = "" mutable

    at 0s    iPad  create Note n1 title="Itinerary"
    at 5s    iPad  share trip
    \(timeline)
    settle
    """
  }

  static func run(_ text: String, policy: String? = nil, keepEvents: Bool = false) throws -> ScenarioRunner.Result {
    let file = try ScenarioParser.parse(text, source: "sharing.scenario").get()
    return ScenarioRunner.run(file, policy: try policy.map { try PolicySpec.parse($0).get() }, keepEvents: keepEvents)
  }

  // MARK: The statements

  @Test(arguments: [
    ("at 6s iPad invite bob to trp", "unknown share 'trp'; did you mean 'trip'?"),
    ("at 6s iPad invite rob to trip", "unknown account 'rob'; did you mean 'bob'?"),
    ("at 6s iPad invite bob trip", "expected 'to', found 'trip'; write 'DEVICE invite ACCOUNT to SHARE [read-only|read-write]'"),
    ("at 6s iPad invite bob to trip read", "expected read-only or read-write, found 'read'; did you mean 'read-only'?"),
    ("at 6s iPad invite bob to trip read-only now", "unexpected 'now'; write 'DEVICE invite ACCOUNT to SHARE [read-only|read-write]'"),
    ("at 6s mac accept", "expected the share's name; write 'DEVICE accept SHARE'"),
    ("at 6s iPad permission trip bob", "expected read-only or read-write; write 'DEVICE permission SHARE ACCOUNT read-only|read-write'"),
    ("at 6s iPad remove bob form trip", "expected 'from', found 'form'; write 'DEVICE remove ACCOUNT from SHARE'"),
    ("at 6s iPad unshare album", "unknown share 'album'"),
    ("at 6s iPad unshare tirp", "unknown share 'tirp'; did you mean 'trip'?"),
    ("at 6s iPad shar trip", "unknown action 'shar'; did you mean 'share'?"),
  ])
  func mistakesSayWhatToWrite(line: String, message: String) {
    let errors = messages(Self.file(line))
    #expect(errors.count == 1, "\(errors)")
    #expect(errors.first?.hasPrefix(message) == true, "\(errors)")
  }

  @Test func aShareNoLineMakesIsAnErrorWithItsPlace() throws {
    let text = Self.file("").replacingOccurrences(of: "at 5s    iPad  share trip", with: "at 5s    mac   accept trip")
    guard case .failure(let errors) = ScenarioParser.parse(text, source: "s.scenario") else {
      Issue.record("parsed")
      return
    }
    let d = try #require(errors.diagnostics.first)
    #expect(d.message == "unknown share 'trip'; a share is made by a 'DEVICE share NAME' line")
    #expect(d.location.line == 13)
    #expect(d.location.column == 23)
  }

  @Test func theWriterWritesEveryStatementBackAsItWasRead() throws {
    let text = Self.file(
      """
      at 6s    iPad  invite bob to trip read-only
      at 7s    mac   accept trip
      at 8s    iPad  permission trip bob read-write
      at 9s    iPad  invite carol to trip
      at 10s   mac   leave trip
      at 11s   iPad  remove carol from trip
      at 12s   iPad  unshare trip
      """)
    let file = try ScenarioParser.parse(text, source: "s.scenario").get()
    let again = try ScenarioParser.parse(file.rendered(), source: "again.scenario").get()
    #expect(again.rendered() == file.rendered())
    func statements(_ f: ScenarioFile) -> [ShareStatement] {
      f.timeline.compactMap { if case .sharing(_, let s) = $0.action { s } else { nil } }
    }
    #expect(statements(again) == statements(file))
    #expect(statements(file).count == 8)
    #expect(file.shareNames == ["trip"])
  }

  // MARK: The world

  @Test func aParticipantSeesTheSharedRecordsOnlyOnceItAccepts() throws {
    let result = try Self.run(Self.file("at 6s    iPad  invite bob to trip read-write\nat 7s    mac   accept trip"))
    #expect(result.report.passed, "\(result.report.text)")
    #expect(result.world.visibleRecords(device: 1).map(\.key) == [0])
    let invitedOnly = try Self.run(Self.file("at 6s    iPad  invite bob to trip read-write"))
    #expect(invitedOnly.world.visibleRecords(device: 1).isEmpty)
    #expect(invitedOnly.report.violations.isEmpty, "\(invitedOnly.report.text)")
  }

  @Test func aShareActionMadeOfflineChangesNothing() throws {
    let result = try Self.run(
      Self.file("at 5.5s  offline iPad\nat 6s    iPad  invite bob to trip read-write\nat 7s    mac   accept trip\nat 8s    online iPad"),
      keepEvents: true)
    #expect(result.world.visibleRecords(device: 1).isEmpty)
    #expect(result.report.violations.isEmpty, "\(result.report.text)")
    var refused = 0
    for e in result.world.events {
      if case .share(_, .invite, done: false) = e.what { refused += 1 }
    }
    #expect(refused == 1)
  }

  /// After Bob is removed, Alice's later edit never reaches his Mac, whatever his engine keeps.
  @Test func theServerSendsNothingToAnAccountWithoutAccess() throws {
    let text = Self.file(
      """
      at 6s    iPad  invite bob to trip read-write
      at 7s    mac   accept trip
      at 20s   iPad  remove bob from trip
      at 30s   iPad  set n1 title="Itinerary, final"
      """)
    let kept = try Self.run(text, policy: "keeps-revoked-shares")
    let macCopy = try #require(kept.world.visibleRecords(device: 1).first)
    #expect(macCopy.fields[0].value == .string("Itinerary"))
    #expect(kept.world.serverRecord(0)?.fields[0].value == .string("Itinerary, final"))
    #expect(kept.report.counts[.accessLeak] == 1)
    #expect(kept.report.counts[.divergence] == 0, "a leaked copy is not also a divergence")
    let removed = try Self.run(text)
    #expect(removed.world.visibleRecords(device: 1).isEmpty)
    #expect(removed.report.violations.isEmpty, "\(removed.report.text)")
  }

  /// A read-only participant's edit is refused; the default engine takes the server's value back
  /// and says so, and the oracle withdraws the edit.
  @Test func aRefusedEditIsTakenBackAndReported() throws {
    let text = Self.file(
      """
      at 6s    iPad  invite bob to trip read-only
      at 7s    mac   accept trip
      at 20s   mac   set n1 title="Bob's itinerary"
      """)
    let result = try Self.run(text)
    #expect(result.report.violations.isEmpty, "\(result.report.text)")
    #expect(result.world.visibleRecords(device: 1).first?.fields[0].value == .string("Itinerary"))
    #expect(
      result.world.facts.events.contains {
        if case .permissionRefused([0], reverted: true) = $0.fact { return true }
        return false
      })
    let ignored = try Self.run(text, policy: "ignores-permission-failure")
    #expect(ignored.report.counts[.lostEdit] == 1)
    #expect(ignored.report.anomalies.first { $0.kind == .lostEdit }?.explanation.contains("permissionFailure") == true)
  }

  /// A participant's edit still unsent when it is removed is refused with zoneNotFound; the
  /// default engine learns from the shared database that its access ended and removes the
  /// record with the change.
  @Test func aWriteAfterRemovalIsRefusedAndDropped() throws {
    let text = Self.file(
      """
      at 6s    iPad  invite bob to trip read-write
      at 7s    mac   accept trip
      at 19s   offline mac
      at 20s   mac   set n1 title="Bob's late edit"
      at 25s   iPad  remove bob from trip
      at 30s   online mac
      """)
    let result = try Self.run(text, keepEvents: true)
    #expect(result.world.visibleRecords(device: 1).isEmpty)
    #expect(result.world.serverRecord(0)?.fields[0].value == .string("Itinerary"))
    var refusals: [CloudKitError] = []
    for e in result.world.events {
      if case .decided(_, _, .failed(let error, _)) = e.what { refusals.append(error) }
    }
    #expect(refusals.contains(.zoneNotFound))
    // Bob's edit went with his access, and his app was told: withdrawn, not lost.
    #expect(result.report.violations.isEmpty, "\(result.report.text)")
  }

  @Test func aRunWithSharesIsDeterministic() throws {
    let text = Self.file("at 6s    iPad  invite bob to trip read-write\nat 7s    mac   accept trip\nat 20s   mac   leave trip")
    let a = try Self.run(text)
    let b = try Self.run(text, keepEvents: true)
    #expect(a.report.traceHash == b.report.traceHash)
  }

  /// Without a `share` line nothing of sharing runs: no shared-database fetch is ever sent.
  @Test func withoutSharesNoSharedDatabaseIsFetched() throws {
    let result = ScenarioRunner.run(try Scenario.load("two-device-acceptance"), keepEvents: true)
    for e in result.world.events {
      if case .sent(_, _, _, let message) = e.what, case .fetchShared = message { Issue.record("a shared fetch was sent") }
    }
    #expect(!result.world.hasSharing)
  }

  /// `shared-fetch=at-launch`: the shared database is fetched again once the app is relaunched.
  @Test func anEngineThatFetchesSharesAtLaunchCatchesUpAfterARelaunch() throws {
    let text = Self.file(
      """
      at 6s    iPad  invite bob to trip read-write
      at 7s    mac   sync
      at 8s    mac   accept trip
      at 30s   mac   kill
      at 31s   mac   sync
      """)
    let relaunched = try Self.run(text, policy: "fetches-shares-at-launch")
    #expect(relaunched.report.violations.isEmpty, "\(relaunched.report.text)")
    #expect(relaunched.world.visibleRecords(device: 1).map(\.key) == [0])
    let never = try Self.run(text.replacingOccurrences(of: "at 30s   mac   kill\n", with: ""), policy: "fetches-shares-at-launch")
    #expect(never.world.visibleRecords(device: 1).isEmpty)
    #expect(never.report.counts[.divergence] >= 1)
  }

  /// An access leak's explanation tells the share's story: who shared, who removed whom, and the
  /// reply that ended access.
  @Test func anAccessLeakIsExplainedWithTheSharesStory() throws {
    let file = try Scenario.load("participant-removed")
    let (text, result) = Explanation.run(file, app: nil, seed: nil, policy: nil)
    #expect(result.report.counts[.accessLeak] == 1)
    for line in [
      "iPad shares its zone as trip", "iPad invites bob to trip (read-write)", "mac accepts trip", "iPad removes bob from trip",
      "(shared database): no access to n1 any more", "mac learns its account has no access to n1 any more and keeps showing it (access-ended=keep)",
    ] {
      #expect(text.contains(line), "\(line)")
    }
  }

  // MARK: Hierarchy shares (`share S of ID`, `parent` fields)

  /// Alice's lists and items, her phone and Bob's iPad; `timeline` after the lists are made.
  static func hierarchy(_ timeline: String, policy: String = "field-lww-hlc") -> String {
    """
    scenario hierarchy
    devices phone iPad
    policy \(policy)
    latency 100ms
    account alice phone
    account bob iPad

    type List
      title: string = "" mutable
    type Item
      list: ref List? parent
      text: string = ""

    at 0s    phone  create List trip title="Packing"
    at 1s    phone  create List home title="Chores"
    at 5s    phone  create Item socks list=trip text="socks"
    at 6s    phone  create Item mop list=home text="mop"
    \(timeline)
    settle
    """
  }

  @Test(arguments: [
    ("at 9s phone share packing of trp", "unknown record 'trp'; did you mean 'trip'?"),
    ("at 9s phone share packing off trip", "expected 'of', found 'off'; write 'DEVICE share SHARE [in ZONE | of RECORD]'"),
    ("at 9s phone share packing of", "expected the id of the share's root record; write 'DEVICE share SHARE [in ZONE | of RECORD]'"),
    ("at 9s phone share packing of trip now", "unexpected 'now'; write 'DEVICE share SHARE [in ZONE | of RECORD]'"),
    (
      "at 9s phone share packing of trip\nat 10s phone share packing of home", "share 'packing' is of 'trip' on line 18; a share keeps what it shares"
    ),
    ("at 9s phone share packing of trip\nat 10s phone share packing", "share 'packing' is of 'trip' on line 18; write 'share packing of trip'"),
  ])
  func hierarchyMistakesSayWhatToWrite(line: String, message: String) {
    let errors = messages(Self.hierarchy(line))
    #expect(errors.count == 1, "\(errors)")
    #expect(errors.first?.hasPrefix(message) == true, "\(errors)")
  }

  @Test func aParentModifierIsForOneRefFieldAType() {
    let twoParents = Self.hierarchy("").replacingOccurrences(
      of: "  text: string = \"\"\n", with: "  text: string = \"\"\n  other: ref List? parent\n")
    #expect(messages(twoParents).first?.hasPrefix("Item already has a parent field, list: a record has one CKRecord.parent") == true)
    let notARef = Self.hierarchy("").replacingOccurrences(of: "  text: string = \"\"\n", with: "  text: string = \"\" parent\n")
    #expect(messages(notARef).first?.hasPrefix("'parent' is for ref fields") == true, "\(messages(notARef))")
  }

  @Test func aHierarchyShareIsWrittenBackAsItWasRead() throws {
    let file = try ScenarioParser.parse(Self.hierarchy("at 9s    phone  share packing of trip"), source: "h.scenario").get()
    let again = try ScenarioParser.parse(file.rendered(), source: "again.scenario").get()
    #expect(again.rendered() == file.rendered())
    #expect(file.rendered().contains("  list: ref List? parent"))
    #expect(file.shareRoots == ["trip"])
    #expect(again.schema == file.schema)
  }

  /// A hierarchy share shows Bob the root and what is below it — not Alice's other list — and
  /// an item Alice adds to the list later reaches him; one added to her other list does not.
  @Test func aHierarchyShareCoversItsRootAndWhatIsBelowIt() throws {
    let result = try Self.run(
      Self.hierarchy(
        """
        at 9s    phone  share packing of trip
        at 10s   phone  invite bob to packing read-write
        at 11s   iPad   accept packing
        at 20s   phone  create Item hat list=trip text="hat"
        at 21s   phone  create Item broom list=home text="broom"
        at 30s   iPad   create Item towel list=trip text="towel"
        """))
    #expect(result.report.violations.isEmpty, "\(result.report.text)")
    let names = result.world.visibleRecords(device: 1).map { result.recordNames[Int($0.key)] }.sorted()
    #expect(names == ["hat", "socks", "towel", "trip"])
    // Bob's towel is made in the share: Alice's phone shows it too.
    #expect(result.world.visibleRecords(device: 0).contains { result.recordNames[Int($0.key)] == "towel" })
  }

  /// Saving a child moves its parent's change tag on the server, and no fetch reports it.
  @Test func aChildsSaveMovesItsParentsTagSilently() throws {
    let result = try Self.run(Self.hierarchy(""))
    let server = result.world.servers[0]
    let trip = try #require(server.records[0])
    let phoneCopy = try #require(result.world.devices[0].store[0])
    #expect(trip.changeTag != phoneCopy.changeTag, "the phone never hears of the parent's new tag")
    #expect(result.report.violations.isEmpty, "\(result.report.text)")
  }

  /// `share-root=as-known`: the share is refused for good and settle says so; the engine that
  /// fetches the root first makes it. A root whose tag moved because another device edited it
  /// is shared once the owner's device fetches that edit.
  @Test func aShareWithAStaleRootIsRefusedUntilTheTagIsFetched() throws {
    let stale = try Self.run(
      Self.hierarchy(
        "at 9s    phone  sync\nat 20s   phone  share packing of trip\nat 21s   phone  invite bob to packing\nat 30s   iPad   accept packing"),
      policy: "shares-stale-root")
    #expect(stale.report.counts[.stalledSync] == 1, "\(stale.report.text)")
    #expect(stale.world.visibleRecords(device: 1).isEmpty)
    #expect(stale.report.text.contains("saving socks (a child of trip) moved trip's change tag on the server"), "\(stale.report.text)")
    // Without a child saved since the phone last fetched the list, the stale engine shares too.
    let noChild = try Self.run(
      """
      scenario hierarchy
      devices phone mac iPad
      policy shares-stale-root
      latency 100ms
      account alice phone mac
      account bob iPad

      type List
        title: string = "" mutable
      type Item
        list: ref List? parent

      at 0s    phone  create List trip title="Packing"
      at 5s    mac    sync
      at 6s    mac    set trip title="Packing list"
      at 8s    phone  share packing of trip
      at 30s   phone  sync
      at 31s   phone  invite bob to packing
      at 40s   iPad   accept packing
      settle
      """)
    #expect(noChild.report.violations.isEmpty, "\(noChild.report.text)")
    #expect(noChild.world.visibleRecords(device: 2).count == 1)
    #expect(noChild.world.sharing.refused.isEmpty)
  }

  // MARK: Zones (`create … in ZONE`, `share S in ZONE`)

  /// Alice's notes in two zones, `family` and `work`, and one in the app's zone.
  static func zones(_ timeline: String, policy: String = "field-lww-hlc") -> String {
    """
    scenario zones
    devices iPad mac
    policy \(policy)
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

  @Test(arguments: [
    ("at 9s iPad share home in famly", "unknown zone 'famly'; did you mean 'family'?"),
    ("at 9s iPad share home in", "expected the name of the zone to share; write 'DEVICE share SHARE [in ZONE | of RECORD]'"),
    ("at 9s iPad share home in family now", "unexpected 'now'; write 'DEVICE share SHARE [in ZONE | of RECORD]'"),
    ("at 9s iPad create Note n9 in", "expected the zone's name after 'in'; write 'DEVICE create TYPE ID in ZONE [field=VALUE ...]'"),
    ("at 9s iPad share home in family\nat 10s iPad share home in work", "share 'home' is of zone 'family' on line 14; a share keeps what it shares"),
    ("at 9s iPad share home in family\nat 10s iPad share home", "share 'home' is of zone 'family' on line 14; write 'share home in family'"),
  ])
  func zoneMistakesSayWhatToWrite(line: String, message: String) {
    let errors = messages(Self.zones(line))
    #expect(errors.count == 1, "\(errors)")
    #expect(errors.first?.hasPrefix(message) == true, "\(errors)")
  }

  @Test func zonesAreWrittenBackAsTheyWereRead() throws {
    let file = try ScenarioParser.parse(Self.zones("at 9s    iPad  share home in family"), source: "z.scenario").get()
    let again = try ScenarioParser.parse(file.rendered(), source: "again.scenario").get()
    #expect(again.rendered() == file.rendered())
    #expect(file.rendered().contains("iPad create Note dinner in family title=\"Dinner\""))
    #expect(file.zoneNames == ["family", "work"])
    #expect(file.shareZones == ["family"])
    #expect(again.recordZones == file.recordZones)
  }

  /// A share of one zone shows Bob that zone's records, never the other zone's or the app zone's;
  /// a note he adds referring to a shared one is made in that zone.
  @Test func aShareOfAZoneCoversThatZoneAlone() throws {
    let result = try Self.run(
      Self.zones(
        """
        at 9s    iPad  share home in family
        at 10s   iPad  invite bob to home read-write
        at 11s   mac   accept home
        at 20s   iPad  create Note dessert in family title="Dessert"
        at 21s   iPad  create Note q3 in work title="Q3"
        at 30s   mac   set dinner title="Dinner at 8"
        """),
      keepEvents: true)
    #expect(result.report.violations.isEmpty, "\(result.report.text)")
    let names = result.world.visibleRecords(device: 1).map { result.recordNames[Int($0.key)] }.sorted()
    #expect(names == ["dessert", "dinner"])
    #expect(result.world.serverRecord(0)?.fields[0].value == .string("Dinner at 8"))
    let words = Vocabulary(world: result.world, recordNames: result.recordNames)
    #expect(words.shareAction(.share(0)) == "shares its zone family as home")
  }

  /// A share of the app's own zone shows Bob the records made without `in`, and none of the
  /// named zones' (the reference oracle found the server sending them once: access was judged per
  /// owner when no share named a zone).
  @Test func aShareOfTheAppsZoneLeavesTheNamedZonesPrivate() throws {
    let result = try Self.run(
      Self.zones(
        """
        at 9s    iPad  share home
        at 10s   iPad  invite bob to home read-write
        at 11s   mac   accept home
        at 20s   iPad  set dinner title="Dinner at 8"
        """))
    #expect(result.report.violations.isEmpty, "\(result.report.text)")
    #expect(result.world.visibleRecords(device: 1).map { result.recordNames[Int($0.key)] } == ["diary"])
  }
}
