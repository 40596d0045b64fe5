import Replica
@_spi(Kernel) import Simulator

/// What random workloads are shaped by: a scenario's devices and schema, or the built-in
/// default (2–5 devices on the essay's Note / Stroke / Preference schema).
public struct WorkloadShape: Sendable {
  /// A scenario whose devices and schema shape the workload; nil for the default.
  public var base: ScenarioFile?
  /// Intents per seed.
  public var intents: Int
  /// Devices per seed for the default shape (a scenario's device list is used as is).
  public var deviceCounts: ClosedRange<Int>
  /// The workload for a user's app (set by the app forms of the fuzzer and campaign): every
  /// value unique per intent, appends with unique text, and only what a driven device simulates
  /// (zone deletions and sign-outs included) — no text replacements, references, clock jumps,
  /// background windows or app upgrades. The default schema is then ``appSchema``.
  public var forApps = false
  /// The schema the workload is drawn from, when not the base scenario's or the default: a
  /// user's app's own (set by the app forms of the fuzzer and campaign from
  /// ``AppUnderTest/schema``).
  public var schema: Schema?
  /// Whether the workload for apps follows some deletes with a create of the same name (a
  /// record made again): only for an app that reuses names (``AppUnderTest/reusesNames``).
  public var recreates = true
  /// Whether the workload shares (`sim-cli fuzz --sharing`): the devices are split between two
  /// iCloud accounts, and the first shares its zone with the second, which accepts — then the
  /// permission may change, the participant may be removed or leave, the owner may stop
  /// sharing, and some of it is undone again. Drawn from a stream of its own after every other
  /// draw: a seed's workload is the same as without sharing, plus the accounts and the share.
  /// For an app, only one that shares (``AppUnderTest/sharesRecords``): the CLI refuses others.
  public var sharing = false

  /// A shape: `base` supplies the devices and schema (nil: the built-in default), with `intents`
  /// per seed; `deviceCounts` applies to the default shape only.
  public init(base: ScenarioFile? = nil, intents: Int = 50, deviceCounts: ClosedRange<Int> = 2...5) {
    self.base = base
    self.intents = intents
    self.deviceCounts = deviceCounts
  }

  /// The default schema of the workload for a user's app: notes with a title and a tag, both
  /// mutable, whose values every intent writes afresh (`"v17"`), and a text body that a create
  /// writes (`"v18"`) and appends add to (`" +19;"`: each append's text unique in the seed, and
  /// none a part of another's).
  public static let appSchema = Schema(types: [
    RecordType(
      name: "Note",
      fields: [
        FieldSpec(name: "title", kind: .string, defaultValue: .string(""), mutable: true),
        FieldSpec(name: "tag", kind: .string, defaultValue: .string(""), mutable: true),
        FieldSpec(name: "body", kind: .text, defaultValue: .text(TextValue()), mutable: true),
      ])
  ])

  /// The default workload at a fixed device count (benchmarks).
  public static func `default`(devices: Int, intents: Int = 50) -> WorkloadShape {
    WorkloadShape(intents: intents, deviceCounts: devices...devices)
  }

  /// How fuzz records and comparisons name the workload: the base scenario's name, or `default`.
  public var name: String { base?.name ?? (sharing ? "sharing" : isAssets ? "assets" : "default") }

  /// Whether the workload is the photo album with assets (`fuzz --assets`).
  public var isAssets: Bool { base == nil && !forApps && schema == Self.albumSchema }

  /// The shape for a user's app: the workload for apps, drawn from the app's own schema when it
  /// states one, with records made again only when it reuses names.
  package func forApp(_ app: AppUnderTest) -> WorkloadShape {
    var shape = self
    shape.forApps = true
    if let schema = app.schema { shape.schema = schema }
    shape.recreates = app.reusesNames
    return shape
  }

  /// The essay's schema: a Note whose only truly mutable field is the title, its body written
  /// by the device that made it, append-only strokes (deleted with their note), and a mutable
  /// preference. The swarm adds folders, a settings singleton and a second schema version to
  /// some seeds (``SwarmProfile``).
  public static let essaySchema = Schema(types: [
    RecordType(
      name: "Note",
      fields: [
        FieldSpec(name: "title", kind: .string, defaultValue: .string(""), mutable: true),
        FieldSpec(name: "body", kind: .text, defaultValue: .text(TextValue())),
      ]),
    RecordType(
      name: "Stroke", appendOnly: true,
      fields: [
        FieldSpec(name: "note", kind: .ref("Note"), optional: true, onDelete: .cascade),
        FieldSpec(name: "points", kind: .string, defaultValue: .string("")),
      ]),
    RecordType(
      name: "Preference",
      fields: [
        FieldSpec(name: "value", kind: .string, defaultValue: .string("light"), mutable: true)
      ]),
  ])

  /// A photo album with assets (`selftest --oracles --workload assets`): albums, and photos in
  /// them with a caption, an image (an asset, 8 KB to 32 MB) and a small inline thumbnail, every
  /// field mutable — so that what the oracles find is about the files, not about the schema. The
  /// swarm adds each device's bandwidth, staging purges and files changed while they upload.
  public static let albumSchema = Schema(types: [
    RecordType(name: "Album", fields: [FieldSpec(name: "name", kind: .string, defaultValue: .string(""), mutable: true)]),
    RecordType(
      name: "Photo",
      fields: [
        FieldSpec(name: "album", kind: .ref("Album"), optional: true, mutable: true),
        FieldSpec(name: "caption", kind: .string, defaultValue: .string(""), mutable: true),
        FieldSpec(name: "image", kind: .asset, optional: true, mutable: true),
        FieldSpec(name: "thumbnail", kind: .bytes, defaultValue: .bytes([]), mutable: true),
      ]),
  ])

  static let deviceNames = ["iPad", "phone", "mac", "watch", "tv", "car", "web", "vision"]
}
