@_spi(Kernel) import Simulator

/// What a policy's merge decisions may look at besides the records: the schema.
public struct MergeContext: Sendable {
  /// The run's schema: types, fields, and which fields are `mutable`.
  public var schema: Schema {
    didSet { rules = SchemaRules(schema) }
  }
  /// What the schema's references and uniqueness ask of every device, precomputed.
  package private(set) var rules: SchemaRules
  /// Per record key: whether the run created it again after a delete (a re-create). Only such
  /// records have copies of more than one incarnation (creating intent), told apart by
  /// ``RecordState/creator``; empty in a run without re-creates.
  package var recreatedKeys: [Bool] = []
  /// Per record: the delete a zone deletion made of it (the latest). A user's app that learns
  /// its zone was deleted and carries out a delete rule for it names this delete as the rule's
  /// trigger; nothing decides by it.
  package var zoneDeletes: [RecordKey: IntentID] = [:]

  /// Whether record `key` was created again after a delete in this run (so far).
  package func isRecreated(_ key: RecordKey) -> Bool { Int(key) < recreatedKeys.count && recreatedKeys[Int(key)] }
  /// A context for a run on `schema`.
  public init(schema: Schema) {
    self.schema = schema
    rules = SchemaRules(schema)
  }

  /// The index of the field called `name` in `record`'s type, or nil when it has none:
  /// `record.fields[context.field("title", of: record)!]`.
  public func field(_ name: String, of record: RecordState) -> Int? {
    Int(record.type) < schema.types.count ? schema.types[Int(record.type)].fieldIndex(named: name) : nil
  }
}

/// The server's decision on an incoming save.
public enum SaveDecision: Hashable, Sendable {
  /// Store this record as the server's version (it may be the current one unchanged, if the
  /// incoming write lost).
  case store(RecordState)
  /// `if-unchanged` and the base tag is stale: answer with a conflict.
  case conflict
  /// The record is deleted and stays deleted.
  case refuseDeleted
}

/// A sync policy: every merge decision the server and the devices make goes through it.
///
/// The mechanics — outbox, batches, retries, tokens, retention, refetch, lifecycle — read their
/// axes from ``settings``; the decisions about which value survives are the four methods. All
/// presets are ``StandardPolicy`` values; to model another stack, conform your own type (often by
/// wrapping a `StandardPolicy` and overriding one decision) and fuzz it with the same engine:
///
///     struct PreferLongerTitle: SyncPolicy {
///       var base = StandardPolicy(preset: "field-lww-hlc")!
///       var name: String { "prefer-longer-title" }
///       var settings: PolicySettings { base.settings }
///       func serverSave(_ w: RecordWrite, current: RecordState?, context: MergeContext) -> SaveDecision {
///         base.serverSave(w, current: current, context: context)
///       }
///       // … deviceApply and resolveConflict likewise
///     }
///
/// Policies see their own metadata (stamps, change tags) and the values; the oracle judges only
/// intents and provenance, so a policy cannot hide what it loses.
public protocol SyncPolicy: Sendable {
  /// How reports name the policy.
  var name: String { get }
  /// The axes the mechanics obey.
  var settings: PolicySettings { get }

  /// Whether records should carry ``VersionVector``s — per device, the newest write a copy has
  /// incorporated, directly or through what its device had seen — for decisions that must tell
  /// a concurrent write from a seen one. Costs a vector per record copy; by default only
  /// `conflict=update-wins` asks for it.
  var tracksVersions: Bool { get }

  /// Server: an incoming save. `current` is the server's record, live or deleted (a tombstone,
  /// or a hard-delete marker still in the change log), or nil if the server has none.
  func serverSave(_ write: RecordWrite, current: RecordState?, context: MergeContext) -> SaveDecision

  /// Server: an incoming delete of a live record. Return `nil` to delete it, or the record to
  /// keep when the delete loses (e.g. to an update the deleting device had not seen).
  func serverDelete(_ write: RecordWrite, current: RecordState, context: MergeContext) -> RecordState?

  /// Device: fold a record from the server (fetched, or returned by a save) into the local copy.
  /// `local` is the device's copy (nil: it has none; a copy it deleted itself, with the delete
  /// not yet acknowledged, has `isDeleted` set). `pending` are the fields with local changes not
  /// yet acknowledged (nil: none; every field for a pending delete). Returns the new local copy;
  /// a deleted record for a deletion.
  func deviceApply(remote: RecordState, local: RecordState?, pending: FieldMask?, context: MergeContext) -> RecordState

  /// Device, `if-unchanged` only: merge the conflicting versions into the record to save again.
  func resolveConflict(client: RecordState, server: RecordState, ancestor: RecordState?, context: MergeContext) -> RecordState
}

extension SyncPolicy {
  /// By default, versions are tracked only under `conflict=update-wins`.
  public var tracksVersions: Bool { settings.conflict == .updateWins }

  /// By default a delete always goes ahead: returns nil.
  public func serverDelete(_ write: RecordWrite, current: RecordState, context: MergeContext) -> RecordState? { nil }

  /// By default the server's version wins whole: the device's conflicting changes are dropped.
  public func resolveConflict(client: RecordState, server: RecordState, ancestor: RecordState?, context: MergeContext) -> RecordState {
    server
  }
}
