import Replica
@_spi(Kernel) import Simulator
import Testing

@testable import Scenarios

/// Delete rules, uniqueness and app versions, judged in both directions: the planted design
/// loses and is caught, the correct one loses nothing.
@Suite struct SchemaRulesOracleTests {
  func run(_ text: String, policy: String? = nil) throws -> ScenarioRunner.Result {
    let file = try parsed(text)
    return ScenarioRunner.run(file, policy: try policy.map { try PolicySpec.parse($0).get() })
  }

  static let lists = """
    devices iPad phone
    latency 100ms
    type List
      name: string = "" mutable
    type Item
      list: ref List? on-delete RULE
      title: string = ""
    at 0s iPad create List l1 name="Home"
    at 0s iPad create Item a list=l1 title="Lamp"
    at 0s iPad create Item b list=l1 title="Chair"
    at 2s sync
    at 5s phone delete l1
    settle
    """

  @Test func aCascadeDeletesTheChildrenOnTheDeletingDeviceAsIntentsOfThatDelete() throws {
    let result = try run(Self.lists.replacingOccurrences(of: "RULE", with: "cascade"), policy: "field-lww-hlc")
    #expect(result.report.violations.isEmpty, "\(result.report.text)")
    let log = result.world.log.intents
    let delete = try #require(log.first { $0.kind == .delete && $0.trigger == 0 })
    let cascades = log.filter { $0.trigger == delete.id }
    #expect(cascades.count == 2)
    #expect(cascades.allSatisfy { $0.kind == .delete && $0.device == delete.device })
    for d in result.world.devices.indices { #expect(result.world.visibleRecords(device: d).isEmpty) }
  }

  @Test func nullifyClearsTheReferenceAndKeepsTheChildren() throws {
    let result = try run(Self.lists.replacingOccurrences(of: "RULE", with: "nullify"), policy: "field-lww-hlc")
    #expect(result.report.violations.isEmpty, "\(result.report.text)")
    let items = result.world.visibleRecords(device: 0)
    #expect(items.count == 2)
    #expect(items.allSatisfy { $0.fields[0].value == .null })
  }

  @Test func denyRefusesTheDeleteWhileAChildRefersToIt() throws {
    // (Item is not CloudKit-safe with deny, so its records never leave the iPad: delete there.)
    let text = Self.lists.replacingOccurrences(of: "RULE", with: "deny").replacingOccurrences(of: "phone delete l1", with: "iPad delete l1")
    let result = try run(text, policy: "field-lww-hlc")
    let delete = try #require(result.world.log.intents.first { $0.kind == .delete })
    #expect(delete.ignored?.contains("delete rule is deny") == true)
  }

  static let concurrentChild = """
    devices iPad phone
    latency 100ms
    type List
      name: string = "" mutable
    type Item
      list: ref List? on-delete RULE
      title: string = ""
    at 0s iPad create List l1 name="Home"
    at 2s sync
    at 5s offline phone
    at 10s phone create Item c list=l1 title="Eggs"
    at 12s iPad delete l1
    at 30s online phone
    settle
    """

  @Test(arguments: ["cascade", "nullify"])
  func aChildMadeWhileItsParentWasDeletedDanglesOnlyWhenRulesRunLocally(rule: String) throws {
    let text = Self.concurrentChild.replacingOccurrences(of: "RULE", with: rule)
    let bad = try run(text, policy: "local-delete-rules").report
    #expect(bad.counts[.danglingReference] == 1, "\(bad.text)")
    let dangling = try #require(bad.anomalies.first { $0.kind == .danglingReference })
    #expect(dangling.explanation.contains("references=local-only"))
    for good in ["field-lww-hlc", "crdt", "sync-engine-merge", "append-only"] {
      let report = try run(text, policy: good).report
      #expect(report.violations.isEmpty, "\(good): \(report.text)")
    }
  }

  @Test func aReferenceToARecordNobodyHasIsDanglingButOneToALiveRecordIsNot() throws {
    // No rule can help a reference written to a record already gone: the phone had deleted l1
    // (no items then) before the iPad, which had not heard, made an item in it — the iPad's
    // delete arrives and the item cascades under propagate; under local-only it dangles.
    let text = """
      devices iPad phone
      latency 100ms
      type List
        name: string = ""
      type Item
        list: ref List? on-delete cascade
      at 0s iPad create List l1
      at 0s iPad create List l2
      at 2s sync
      at 3s offline iPad
      at 4s phone delete l1
      at 5s iPad create Item x list=l1
      at 5s iPad create Item y list=l2
      at 20s online iPad
      settle
      """
    let bad = try run(text, policy: "local-delete-rules").report
    #expect(bad.counts[.danglingReference] == 1, "\(bad.text)")
    #expect(bad.anomalies.first { $0.kind == .danglingReference }?.record?.name == "x")
    #expect(try run(text, policy: "field-lww-hlc").report.violations.isEmpty)
  }

  /// The user moves a note out of a folder and deletes the folder while the server refuses
  /// the note's save for a while.
  static let movedOutThenDeleted = """
    devices iPad phone mac
    latency 100ms
    type Folder
      name: string = "" mutable
    type Note
      title: string = "" mutable
      folder: ref Folder? mutable on-delete cascade
    at 0s   iPad create Folder work
    at 0s   iPad create Folder home
    at 0s   iPad create Note plan folder=work
    at 2s   sync
    at 10s  reject plan with zoneBusy retry-after 20s for 15s
    at 11s  iPad set plan folder=home
    at 12s  iPad delete work
    settle
    """

  @Test func aParentsDeleteWaitsForTheSaveThatMovedAChildOutOfIt() throws {
    let result = try run(Self.movedOutThenDeleted, policy: "field-lww-hlc")
    #expect(result.report.violations.isEmpty, "\(result.report.text)")
    for d in result.world.devices.indices { #expect(result.world.visibleRecords(device: d).count == 2) }
    // Sent as queued, the delete overtakes the refused save and another device cascades the
    // note from its copy, where it is still in the folder.
    let report = try run(Self.movedOutThenDeleted, policy: "field-lww-hlc order=as-queued").report
    #expect(report.counts[.danglingReference] == 1, "\(report.text)")
    let anomaly = try #require(report.anomalies.first { $0.kind == .danglingReference })
    #expect(anomaly.explanation.hasPrefix("a cascade deleted plan, which no user deleted"), "\(anomaly.explanation)")
    #expect(anomaly.explanation.contains("iPad deleted work knowing that iPad's edit i4 (set plan.folder=home at 11.000s)"))
  }

  @Test func aSaveSentWholeAfterUnknownItemDoesNotKeepFetchedFieldsOut() throws {
    // The server wrongly says it lacks the note while the iPad has an edit of its body pending:
    // the iPad will send the whole record, but a fetched version still brings the move the
    // watch made, so the folder's cascade finds the note in its new folder.
    let text = """
      devices iPad watch
      latency 32ms
      type Folder
        name: string = "" mutable
      type Note
        title: string = "" mutable
        body: text = ""
        folder: ref Folder? mutable on-delete cascade
      at 0s   iPad create Folder work
      at 0s   iPad create Folder home
      at 0s   iPad create Note plan folder=work
      at 2s   sync
      at 10s  offline iPad
      at 20s  iPad append plan.body " +53"
      at 30s  watch set plan folder=home
      at 30s  watch delete work
      at 40s  reject plan with unknownItem for 1m
      at 60s  online iPad
      settle
      """
    let result = try run(text, policy: "field-lww-hlc")
    #expect(result.report.violations.isEmpty, "\(result.report.text)")
    for d in result.world.devices.indices { #expect(result.world.visibleRecords(device: d).count == 2) }
  }

  @Test func aCascadeOfAChildFiledThereMeanwhileIsTheDeletesToMake() throws {
    // The phone files the note in the folder while the iPad, not knowing, deletes the folder:
    // the phone's cascade of it is the delete's to make, not a loss.
    let text = """
      devices iPad phone
      latency 100ms
      type Folder
        name: string = "" mutable
      type Note
        title: string = "" mutable
        folder: ref Folder? mutable on-delete cascade
      at 0s   iPad create Folder work
      at 0s   iPad create Note plan
      at 2s   sync
      at 5s   offline iPad
      at 6s   phone set plan folder=work
      at 7s   iPad delete work
      at 10s  online iPad
      settle
      """
    let result = try run(text, policy: "field-lww-hlc")
    #expect(result.report.violations.isEmpty, "\(result.report.text)")
    #expect(!result.world.facts.cascades.isEmpty)
    for d in result.world.devices.indices { #expect(result.world.visibleRecords(device: d).isEmpty) }
  }

  static let singleton = """
    devices iPad phone
    latency 100ms
    type Settings singleton
      theme: string = "light" mutable
      fontSize: int = 14 mutable
    at 0s offline iPad phone
    at 1s iPad create Settings s1 theme="dark"
    at 2s phone create Settings s2 fontSize=18
    at 20s online iPad phone
    settle
    expect no violations
    expect s1.theme == "dark"
    expect s2.fontSize == 18
    """

  @Test func recordNamesFromTheKeyMakeBothCreatesOneRecordWhoseFieldsMerge() throws {
    let result = try run(Self.singleton, policy: "field-lww-hlc")
    #expect(result.report.passed, "\(result.report.text)")
    for d in result.world.devices.indices { #expect(result.world.visibleRecords(device: d).count == 1) }
  }

  @Test func randomRecordNamesLeaveTwoSingletons() throws {
    let report = try run(Self.singleton.replacingOccurrences(of: "expect no violations\n", with: ""), policy: "random-record-names").report
    #expect(report.counts[.logicalDuplicate] == 1, "\(report.text)")
    let anomaly = try #require(report.anomalies.first { $0.kind == .logicalDuplicate })
    #expect(anomaly.intents.count == 2)
    #expect(anomaly.explanation.contains("Settings is a singleton"))
  }

  @Test func deduplicationByTwoDevicesAtOnceDeletesBothCopies() throws {
    let report = try run(Self.singleton.replacingOccurrences(of: "expect no violations\n", with: ""), policy: "dedupes-after-fetch").report
    #expect(report.counts[.lostEdit] == 2, "\(report.text)")
    #expect(report.counts[.logicalDuplicate] == 0)
    let s1 = try #require(report.anomalies.first { $0.kind == .lostEdit && $0.record?.name == "s1" })
    #expect(s1.explanation.contains("phone deleted it at"), "\(s1.explanation)")
    #expect(s1.explanation.contains("as a duplicate of s2, keeping its own copy (unique=dedupe), and s2 is gone too"), "\(s1.explanation)")
  }

  @Test func deduplicationKeepsOneCopyAndLosesWhatWasWrittenToTheOther() throws {
    let text = Self.singleton.replacingOccurrences(of: "expect no violations\n", with: "").replacingOccurrences(
      of: "at 20s online iPad phone", with: "at 20s online iPad\nat 30s offline iPad\nat 40s online phone\nat 60s online iPad")
    let result = try run(text, policy: "dedupes-after-fetch")
    let report = result.report
    #expect(report.counts[.lostEdit] == 1, "\(report.text)")
    let lost = try #require(report.anomalies.first { $0.kind == .lostEdit })
    #expect(lost.record?.name == "s1")
    #expect(lost.explanation.contains("s2.theme is \"light\""), "\(lost.explanation)")
    #expect(lost.explanation.contains("theme=\"dark\" at 1.000s) wrote to the deleted copy only"), "\(lost.explanation)")
    let dedupe = try #require(result.world.log.intents.first { $0.keptInstead != nil })
    #expect(dedupe.kind == .delete && dedupe.trigger == 0)
    for d in result.world.devices.indices { #expect(result.world.visibleRecords(device: d).count == 1) }
  }

  @Test func aDeletedDuplicateWhoseValuesTheKeptCopyHasLosesNothing() throws {
    let text = Self.singleton.replacingOccurrences(of: "expect no violations\n", with: "").replacingOccurrences(
      of: "at 20s online iPad phone", with: "at 20s online iPad\nat 30s offline iPad\nat 40s online phone\nat 60s online iPad"
    ).replacingOccurrences(of: "create Settings s1 theme=\"dark\"", with: "create Settings s1")
    let report = try run(text, policy: "dedupes-after-fetch").report
    #expect(report.violations.isEmpty, "\(report.text)")
  }

  @Test func uniqueByComparesTheKeyFieldsOnly() throws {
    let text = """
      devices iPad phone
      latency 100ms
      type Day unique-by date
        date: date = 0s
        mood: string = "" mutable
      at 0s offline iPad phone
      at 1s iPad create Day d1 date=1d mood="good"
      at 2s phone create Day d2 date=1d mood="tired"
      at 3s phone create Day d3 date=2d
      at 20s online iPad phone
      settle
      """
    let bad = try run(text, policy: "random-record-names").report
    #expect(bad.counts[.logicalDuplicate] == 1, "\(bad.text)")
    let good = try run(text, policy: "field-lww-hlc").report
    #expect(good.counts[.logicalDuplicate] == 0)
    #expect(good.counts[.lostEdit] == 0, "mood is mutable: the two moods are a concurrent overwrite, not a loss")
    #expect(good.counts[.concurrentOverwrite] == 1, "\(good.text)")
  }

  @Test func theSameKeyInTwoAccountsIsTwoRecordsAndNoDuplicate() throws {
    let text = """
      devices iPad phone
      latency 100ms
      account alice iPad
      account bob phone
      type Settings singleton
        theme: string = "light" mutable
      at 1s iPad create Settings s1
      at 2s phone create Settings s2
      settle
      """
    for policy in ["random-record-names", "field-lww-hlc"] {
      let report = try run(text, policy: policy).report
      #expect(report.violations.isEmpty, "\(policy): \(report.text)")
    }
  }

  static let rollout = """
    devices iPad phone
    latency 100ms
    app-version 1 iPad phone
    type Note
      title: string = "" mutable
      color: string = "none" since 2
    at 0s iPad create Note n1 title="Groceries"
    at 2s sync
    at 10s iPad upgrade 2
    at 20s iPad set n1 color="green"
    at 22s sync
    at 30s phone set n1 title="Groceries for Sunday"
    at 32s sync
    UPGRADE
    settle
    """

  @Test func anOldVersionErasesWhatItDoesNotKnowOnlyWhenItDropsUnknownFields() throws {
    let text = Self.rollout.replacingOccurrences(of: "UPGRADE", with: "at 1m phone upgrade 2")
    let bad = try run(text, policy: "drops-unknown-fields").report
    #expect(bad.counts[.lostEdit] == 1, "\(bad.text)")
    #expect(bad.anomalies.first { $0.kind == .lostEdit }?.explanation.contains("erased by an older app version") == true)
    let good = try run(text, policy: "field-lww-hlc")
    #expect(good.report.violations.isEmpty, "\(good.report.text)")
    let phone = good.world.visibleRecords(device: 1)
    #expect(phone.first?.fields[1].value == .string("green"), "kept while on version 1, shown after the upgrade")
  }

  @Test func aDeviceStillOnAnOldVersionIsNotDivergentForNotShowingANewField() throws {
    // The phone never upgrades: it cannot show the colour, under either design; only the erase
    // is a loss.
    let text = Self.rollout.replacingOccurrences(of: "UPGRADE", with: "")
    let bad = try run(text, policy: "drops-unknown-fields").report
    #expect(bad.counts[.divergence] == 0, "\(bad.text)")
    #expect(bad.counts[.lostEdit] == 1)
    #expect(try run(text, policy: "field-lww-hlc").report.violations.isEmpty)
  }

  @Test func anUpgradeKillsTheAppLikeAnUpdateDoes() throws {
    // Offline, the phone renames the note and is updated before it can send: with an in-memory
    // outbox the rename dies with the app, as it would on a kill.
    let text = Self.rollout.replacingOccurrences(
      of: "UPGRADE", with: "at 40s offline phone\nat 41s phone set n1 title=\"Lost\"\nat 42s phone upgrade 2\nat 50s online phone")
    let result = try run(text, policy: "memory-outbox")
    #expect(result.world.devices[1].appVersion == 2)
    #expect(
      result.world.facts.events.contains {
        if case .outboxLost = $0.fact { return $0.device == 1 }
        return false
      })
    let kept = try run(text, policy: "field-lww-hlc")
    #expect(kept.world.facts.events.allSatisfy { if case .outboxLost = $0.fact { false } else { true } })
  }
}
