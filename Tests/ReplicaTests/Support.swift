@_spi(Kernel) import Simulator

@testable import Replica

/// The essay's schema: a Note with a mutable title and a text body, and an unsafe Draft type.
let noteSchema = Schema(types: [
  RecordType(
    name: "Note",
    fields: [
      FieldSpec(name: "title", kind: .string, defaultValue: .string(""), mutable: true),
      FieldSpec(name: "body", kind: .text, defaultValue: .text(TextValue())),
    ]),
  RecordType(name: "Draft", fields: [FieldSpec(name: "title", kind: .string)]),  // required, no default
])
let note: Int32 = 0
let draft: Int32 = 1
let titleField: Int32 = 0
let bodyField: Int32 = 1

func seconds(_ s: Double) -> VirtualTime { VirtualTime(nanoseconds: Int64(s * 1_000_000_000)) }

/// A two-device world (`iPad` = 0, `phone` = 1) on a fixed-latency network, driven directly.
struct Harness {
  var world: SyncWorld
  init(
    _ policy: String, overrides: String = "", clocks: [DeviceClock]? = nil, latency: SimDuration = .milliseconds(100), push: Bool = true,
    autosync: SimDuration? = .seconds(1), devices: [String] = ["iPad", "phone"]
  ) {
    let spec = try! PolicySpec.parse(policy + (overrides.isEmpty ? "" : " " + overrides)).get()
    world = SyncWorld(
      WorldConfig(
        deviceNames: devices, clocks: clocks, schema: noteSchema, policy: StandardPolicy(spec: spec), seed: 1,
        network: NetworkConditions(latency: .fixed(latency)), autosync: autosync, push: push ? .always : nil, keepsEvents: true))
  }

  mutating func at(_ t: Double, _ action: WorldAction) { world.schedule(action, at: seconds(t)) }
  mutating func at(_ t: Double, _ device: Int32, _ intent: UserIntent) { world.schedule(.intent(device: device, intent), at: seconds(t)) }

  mutating func runAndSettle(until t: Double = 1_000_000) {
    world.run(until: seconds(t))
    world.settle()
  }

  func title(of key: RecordKey, on device: Int) -> String? {
    guard case .string(let s)? = world.devices[device].visibleRecord(key)?.fields[Int(titleField)].value else { return nil }
    return s
  }

  func body(of key: RecordKey, on device: Int) -> String? {
    world.devices[device].visibleRecord(key)?.fields[Int(bodyField)].value.textValue?.string
  }

  func onServer(_ key: RecordKey) -> Bool { world.server.liveRecords.contains { $0.key == key } }
  func visible(_ key: RecordKey, on device: Int) -> Bool { world.devices[device].visibleRecord(key) != nil }
}

func set(_ key: RecordKey, _ field: Int32, _ value: String) -> UserIntent {
  .set(key: key, values: [FieldWrite(field: field, value: .string(value))])
}

func createNote(_ key: RecordKey, title t: String = "", body b: String = "") -> UserIntent {
  .create(
    type: note, key: key, values: [FieldWrite(field: titleField, value: .string(t)), FieldWrite(field: bodyField, value: .text(TextValue(b, by: 0)))])
}

extension Harness: CustomStringConvertible {
  var description: String { "Harness(\(world.config.policy.name))" }
}
