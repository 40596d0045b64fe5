@_spi(Kernel) import Simulator
import Testing

@testable import Replica

/// The behaviours the oracle will be tested on: each planted bug really loses data, and its
/// fixed variant really does not.
@Suite struct PlantedBehaviourTests {
  /// iPad edits the title, the phone the body, both offline; the iPad syncs first.
  func differentFields(_ policy: String) -> Harness {
    var h = Harness(policy)
    h.at(0, 0, createNote(1, title: "Sermon", body: "In the beginning"))
    h.at(5, .setOnline([0, 1], false))
    h.at(6, 0, set(1, titleField, "Sermon notes"))
    h.at(7, 1, .append(key: 1, field: bodyField, text: " was the Word"))
    h.at(10, .setOnline([0], true))
    h.at(20, .setOnline([1], true))
    h.runAndSettle()
    return h
  }

  @Test func recordLevelAllKeysLosesAConcurrentEditToADifferentField() {
    let h = differentFields("cloudkit-default")
    #expect(h.title(of: 1, on: 0) == "Sermon")  // the iPad's title edit evaporated
    #expect(h.body(of: 1, on: 0) == "In the beginning was the Word")
    #expect(h.title(of: 1, on: 1) == "Sermon")
  }

  @Test func changedKeysKeepsConcurrentEditsToDifferentFields() {
    let h = differentFields("field-lww-arrival")
    for d in 0..<2 {
      #expect(h.title(of: 1, on: d) == "Sermon notes")
      #expect(h.body(of: 1, on: d) == "In the beginning was the Word")
    }
  }

  /// The iPad's clock is 10 minutes fast. It writes a title; the phone sees it and writes a
  /// newer one, causally after.
  func skewed(_ policy: String) -> Harness {
    var h = Harness(policy, clocks: [DeviceClock(skew: .minutes(10)), .perfect])
    h.at(0, 0, createNote(1, title: "draft"))
    h.at(1, 0, set(1, titleField, "old"))
    h.at(10, 1, set(1, titleField, "new"))
    h.runAndSettle()
    return h
  }

  @Test func clockWinnerWithASkewedDeviceKeepsTheStaleValue() {
    let h = skewed("field-lww-clock")
    #expect(h.title(of: 1, on: 0) == "old")
    #expect(h.title(of: 1, on: 1) == "old")
  }

  @Test func hybridLogicalClocksKeepTheCausallyLaterValue() {
    let h = skewed("field-lww-hlc")
    #expect(h.title(of: 1, on: 0) == "new")
    #expect(h.title(of: 1, on: 1) == "new")
  }

  /// The iPad's save reaches the server but the answer is lost (it goes offline); the phone
  /// sees the save and deletes the note; the iPad comes back and retries the save.
  func lostAck(_ policy: String) -> Harness {
    var h = Harness(policy, autosync: nil)
    h.at(0, 0, createNote(1, title: "a"))
    h.at(0.5, .sync(device: 0))
    h.at(2, .sync(device: 1))
    h.at(10, 0, set(1, titleField, "b"))
    h.at(10, .sync(device: 0))  // push arrives at 10.1s; the reply would arrive at 10.2s
    h.at(10.15, .setOnline([0], false))
    h.at(12, .sync(device: 1))
    h.at(13, 1, .delete(key: 1))
    h.at(13, .sync(device: 1))
    h.at(20, .setOnline([0], true))
    h.runAndSettle()
    return h
  }

  @Test func aSaveRetriedAfterALostAnswerRecreatesAHardDeletedRecord() {
    let h = lostAck("hard-delete")
    #expect(h.onServer(1))
    #expect(h.visible(1, on: 0))
    #expect(h.visible(1, on: 1))
  }

  @Test func aTombstoneRefusesTheRetriedSave() {
    let h = lostAck("field-lww-hlc")
    #expect(!h.onServer(1))
    #expect(!h.visible(1, on: 0))
    #expect(!h.visible(1, on: 1))
  }

  /// The iPad is offline longer than the retention while the phone deletes a note.
  func longOffline(_ policy: String) -> Harness {
    var h = Harness(policy)
    h.at(0, 0, createNote(1, title: "a"))
    h.at(60, .setOnline([0], false))
    h.at(120, 1, .delete(key: 1))
    h.at(10 * 86_400, .setOnline([0], true))
    h.runAndSettle()
    return h
  }

  @Test func tokenExpiryWithNaiveRefetchKeepsADeletedRow() {
    let h = longOffline("naive-refetch")
    #expect(h.visible(1, on: 0))  // a zombie
    #expect(!h.visible(1, on: 1))
  }

  @Test func tokenExpiryWithDiffRefetchRemovesIt() {
    let h = longOffline("field-lww-hlc retention=7d")
    #expect(!h.visible(1, on: 0))
    #expect(!h.visible(1, on: 1))
  }

  /// Three notes made without syncing; a 50 ms background window starts a push the 100 ms network
  /// cannot finish.
  func budgetCut(_ policy: String) -> Harness {
    var h = Harness(policy, autosync: nil)
    for k in 1...3 { h.at(1, 0, createNote(RecordKey(k), title: "n\(k)")) }  // autosync is off: nothing syncs yet
    h.at(3, .background(device: 0, budget: .milliseconds(50)))
    h.runAndSettle()
    return h
  }

  @Test func markFirstLosesABatchWhenTheBackgroundBudgetEndsMidFlight() {
    let h = budgetCut("mark-first-unit")
    for k: RecordKey in 1...3 {
      #expect(h.visible(k, on: 0))
      #expect(!h.onServer(k))
      #expect(!h.visible(k, on: 1))
    }
    #expect(
      h.world.facts.events.contains {
        if case .batchAbandoned(let ks, _) = $0.fact { return ks == [1, 2, 3] }
        return false
      })
  }

  @Test func aResumableUnitSurvivesTheSameCut() {
    let h = budgetCut("field-lww-hlc")
    for k: RecordKey in 1...3 {
      #expect(h.onServer(k))
      #expect(h.visible(k, on: 1))
    }
  }

  func killedOffline(_ policy: String) -> Harness {
    var h = Harness(policy)
    h.at(0, .setOnline([0], false))
    h.at(1, 0, createNote(1, title: "unsent"))
    h.at(2, .kill(device: 0))
    h.at(3, .setOnline([0], true))
    h.runAndSettle()
    return h
  }

  @Test func aMemoryOutboxLosesPendingChangesOnKill() {
    let h = killedOffline("memory-outbox")
    #expect(h.visible(1, on: 0))
    #expect(!h.onServer(1))
    #expect(!h.visible(1, on: 1))
  }

  @Test func aDurableOutboxKeepsThem() {
    let h = killedOffline("field-lww-hlc")
    #expect(h.onServer(1))
    #expect(h.visible(1, on: 1))
  }

  /// The phone fetches the iPad's note: the reply arrives at 5.2 s and takes 20.5 ms to apply;
  /// the app is killed in between.
  func killBetweenTokenAndApply(_ policy: String) -> Harness {
    var h = Harness(policy, push: false)
    h.at(0, 0, createNote(1, title: "from the iPad"))
    h.at(5, .sync(device: 1))
    h.at(5.201, .kill(device: 1))
    h.runAndSettle()
    return h
  }

  @Test func savingTheTokenBeforeApplyingSkipsChangesOnAKillBetween() {
    let h = killBetweenTokenAndApply("token-before-apply")
    #expect(h.onServer(1))
    #expect(!h.visible(1, on: 1))
  }

  @Test func savingTheTokenAfterApplyingRefetchesThem() {
    let h = killBetweenTokenAndApply("field-lww-hlc")
    #expect(h.visible(1, on: 1))
  }

  @Test func anUnsafeTypesRecordsNeverReachTheServer() {
    var h = Harness("append-only")
    h.at(0, 0, .create(type: draft, key: 1, values: [FieldWrite(field: 0, value: .string("x"))]))
    h.at(0, 0, createNote(2))
    h.runAndSettle()
    #expect(h.visible(1, on: 0))
    #expect(!h.onServer(1))
    #expect(!h.visible(1, on: 1))
    #expect(h.visible(2, on: 1))
    #expect(h.world.facts.settled)
    #expect(h.world.facts.events.contains { $0.fact == .rejected(1, typeName: "Draft") })
  }
}
