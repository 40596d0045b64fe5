import Replica
@_spi(Kernel) import Scenarios
@_spi(Kernel) import Simulator
import Testing

@testable import SimSyncEngine

/// A user's app driving devices of a world: the first end-to-end runs (work in progress).
@Suite struct UserEngineWorldTests {
  static let schema = Schema(types: [
    RecordType(
      name: "Note",
      fields: [
        FieldSpec(name: "title", kind: .string, defaultValue: .string(""), mutable: true),
        FieldSpec(name: "tag", kind: .string, defaultValue: .string(""), mutable: true),
      ])
  ])

  func world<App: SimApp>(names: [String], app: App.Type = NotesApp.self) -> SyncWorld {
    let spec = try! PolicySpec.parse("sync-engine-merge").get()
    var world = SyncWorld(
      WorldConfig(
        deviceNames: ["iPad", "phone"], schema: Self.schema, policy: StandardPolicy(spec: spec), seed: 1,
        network: NetworkConditions(latency: .fixed(.milliseconds(100)))))
    let provenance = ProvenanceRegistry()
    for d in 0..<2 {
      world.drive(
        device: d,
        with: SyncEngineDriver<App>(index: d, name: ["iPad", "phone"][d], schema: Self.schema, recordNames: names, provenance: provenance))
    }
    return world
  }

  func title(_ world: SyncWorld, _ key: RecordKey, on d: Int) -> String? {
    guard case .string(let s)? = world.devices[d].visibleRecord(key)?.fields[0].value else { return nil }
    return s
  }

  @Test func aNoteMadeOnOneDeviceAndEditedOnTheOtherConverges() {
    var w = world(names: ["n1"])
    w.schedule(.intent(device: 0, .create(type: 0, key: 0, values: [FieldWrite(field: 0, value: .string("v1"))])), at: .zero)
    w.schedule(.intent(device: 1, .set(key: 0, values: [FieldWrite(field: 0, value: .string("v2"))])), at: VirtualTime.zero + .seconds(10))
    w.run(until: VirtualTime.zero + .seconds(60))
    w.settle()
    #expect(w.facts.settled, "\(w.facts.unsettledReason ?? "")")
    #expect(title(w, 0, on: 0) == "v2")
    #expect(title(w, 0, on: 1) == "v2")
    #expect(w.server.liveRecords.first?.fields[0].value == .string("v2"))
    #expect(w.server.liveRecords.first?.fields[0].writer == 2, "the server's value is the phone's edit, i2")
  }

  static let editsOfTwoFields: [(VirtualTime, WorldAction)] = [
    (.zero, .intent(device: 0, .create(type: 0, key: 0, values: [FieldWrite(field: 0, value: .string("v1"))]))),
    (VirtualTime.zero + .seconds(5), .setOnline([1], false)),
    (VirtualTime.zero + .seconds(10), .intent(device: 0, .set(key: 0, values: [FieldWrite(field: 0, value: .string("v2"))]))),
    (VirtualTime.zero + .seconds(12), .intent(device: 1, .set(key: 0, values: [FieldWrite(field: 1, value: .string("v3"))]))),
    (VirtualTime.zero + .seconds(30), .setOnline([1], true)),
  ]

  /// The phone, offline, makes a note and is killed before it syncs.
  static let killedBeforeSync: [(VirtualTime, WorldAction)] = [
    (.zero, .setOnline([1], false)),
    (.zero, .intent(device: 1, .create(type: 0, key: 0, values: [FieldWrite(field: 0, value: .string("v1"))]))),
    (VirtualTime.zero + .seconds(5), .kill(device: 1)),
    (VirtualTime.zero + .seconds(10), .setOnline([1], true)),
  ]

  func judged<App: SimApp>(_ app: App.Type, _ actions: [(VirtualTime, WorldAction)] = Self.editsOfTwoFields) -> (SyncWorld, [Anomaly]) {
    var w = world(names: ["n1"], app: app)
    for (t, a) in actions { w.schedule(a, at: t) }
    w.run(until: VirtualTime.zero + .seconds(60))
    w.settle()
    var oracle = Oracle(world: w, recordNames: ["n1"])
    return (w, oracle.judge().filter(\.kind.isViolation))
  }

  @Test func theReferenceAppLosesNothingWhenTwoDevicesEditDifferentFields() {
    let (w, violations) = judged(NotesApp.self)
    #expect(violations.isEmpty, "\(violations.map(\.explanation))")
    #expect(title(w, 0, on: 1) == "v2")
  }

  @Test func anAppThatAppliesFetchedRecordsOverPendingEditsIsCaught() {
    let (_, violations) = judged(NotesAppOverwritingPendingEdits.self)
    #expect(violations.contains { $0.kind == .lostEdit && $0.field?.name == "tag" }, "\(violations.map(\.explanation))")
  }

  @Test func aKillLosesNothingTheAppPersisted() {
    let (w, violations) = judged(NotesApp.self, Self.killedBeforeSync)
    #expect(w.facts.settled, "\(w.facts.unsettledReason ?? "")")
    #expect(violations.isEmpty, "\(violations.map(\.explanation))")
    #expect(title(w, 0, on: 0) == "v1")
  }

  @Test func anAppThatDoesNotPersistTheEngineStateLosesAChangeMadeBeforeAKill() {
    let (w, violations) = judged(NotesAppNotPersistingState.self, Self.killedBeforeSync)
    #expect(violations.map(\.kind) == [.strandedRecord], "\(violations.map(\.explanation))")
    #expect(title(w, 0, on: 0) == nil)
  }
}
