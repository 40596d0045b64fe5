/// The kind of a field, as scenario files write it: `string text int double bool date bytes asset ref TYPE`.
public enum FieldKind: Hashable, Sendable, CustomStringConvertible {
  case string
  /// Long text edited by appends and replacements; judged character by character by the oracle.
  case text
  case int
  /// A floating-point number (`Double`, `Float`, `Decimal`): literals `3.5`, `-0.25`, `1e3`, `42`.
  case double
  case bool
  /// An instant, stored as nanoseconds from the start of the simulation.
  case date
  /// Bytes stored in the record (`Data`, Core Data's Binary): literals `0x`, `0x89504e47`.
  case bytes
  /// A reference to a record of the named type.
  case ref(String)
  /// A file stored beside the record (`CKAsset`): literals `asset("IMG_0042.heic", 3MB)`.
  case asset

  public var description: String {
    switch self {
    case .string: "string"
    case .text: "text"
    case .int: "int"
    case .double: "double"
    case .bool: "bool"
    case .date: "date"
    case .bytes: "bytes"
    case .ref(let t): "ref \(t)"
    case .asset: "asset"
    }
  }
}

/// One field of a record type.
public struct FieldSpec: Hashable, Sendable {
  /// The field's name, as scenario files write it (`title`).
  public var name: String
  /// What the field holds: `string`, `text`, `int`, `double`, `bool`, `date`, `bytes` or `ref TYPE`.
  public var kind: FieldKind
  /// `?` in the scenario: the field may be absent.
  public var optional: Bool
  /// `= LITERAL` in the scenario.
  public var defaultValue: Value?
  /// Truly mutable (title, sort order, a preference): concurrent writes resolved by LWW are fine.
  public var mutable: Bool
  /// A unique constraint (not CloudKit-safe).
  public var unique: Bool
  /// For a `ref` field: what happens to this record when the record it refers to is deleted
  /// (`on-delete` in the scenario; ``DeleteRule/nullify`` by default). Ignored for other kinds.
  public var onDelete: DeleteRule
  /// The schema version that added the field (`since N`; 1 for the first version).
  public var since: Int
  /// For a `ref` field: the to-many relationship that lists these records on the referred-to
  /// type keeps an order (`ordered`, a Core Data ordered relationship; not CloudKit-safe).
  public var ordered: Bool
  /// For a `ref` field: whether the relationship has an inverse (`no-inverse` when it has none;
  /// not CloudKit-safe).
  public var hasInverse: Bool
  /// For a `ref` field: the reference is the record's `CKRecord.parent` (`parent` in the
  /// scenario; one a type). A share of the referred-to record shares this one with it, and the
  /// server moves the parent's change tag whenever it saves this record.
  public var isParent: Bool = false
  /// `encrypted` in the scenario: the field is one of the record's `encryptedValues` (same
  /// conflict semantics; an app must read and write it there).
  public var encrypted: Bool = false

  /// A field; by default required, without a default value, not `mutable` and not `unique`.
  /// A required field without a default is not CloudKit-safe (``Schema/safetyFindings()``).
  public init(
    name: String, kind: FieldKind, optional: Bool = false, defaultValue: Value? = nil, mutable: Bool = false, unique: Bool = false,
    onDelete: DeleteRule = .nullify, since: Int = 1, ordered: Bool = false, hasInverse: Bool = true
  ) {
    self.name = name
    self.kind = kind
    self.optional = optional
    self.defaultValue = defaultValue
    self.mutable = mutable
    self.unique = unique
    self.onDelete = onDelete
    self.since = since
    self.ordered = ordered
    self.hasInverse = hasInverse
  }

  /// The type a `ref` field refers to, or nil for other kinds.
  public var referencedType: String? {
    if case .ref(let target) = kind { return target }
    return nil
  }

  /// The value a field has before any intent wrote it.
  public var initialValue: Value {
    if let defaultValue { return defaultValue }
    switch kind {
    case .text: return .text(TextValue())
    default: return .null
    }
  }
}

/// What happens to a record when the record one of its `ref` fields refers to is deleted: the
/// delete rule of the relationship, written on the referring (child) side as CloudKit's
/// `CKRecord.Reference` actions are.
public enum DeleteRule: String, Hashable, Sendable, CaseIterable {
  /// The referring record is deleted too (Core Data's `Cascade` on the parent's to-many;
  /// `CKRecord.Reference.Action.deleteSelf`).
  case cascade
  /// The reference is cleared (Core Data's `Nullify`, the default).
  case nullify
  /// The referred-to record cannot be deleted while a record refers to it (Core Data's `Deny`,
  /// which CloudKit integration does not support).
  case deny
}

/// What a type's records must not share: nothing (any number of records), a set of fields (a
/// per-day record, a tag by name), or anything at all (a settings singleton). CloudKit has no
/// unique constraints, so this is the app's intention, checked by the oracle after settle
/// (`logical-duplicate`).
public enum Uniqueness: Hashable, Sendable {
  /// At most one live record of the type (`singleton`).
  case singleton
  /// No two live records with equal values in these fields, by index (`unique-by f,g`).
  case fields([Int])
}

/// A record type: plain (mutable records) or `append-only` (events: created once, never updated).
public struct RecordType: Hashable, Sendable {
  /// The type's name, as scenario files write it (`Note`).
  public var name: String
  /// Whether the type's records are events (`append-only`): created once, never updated, each
  /// expected on every device.
  public var appendOnly: Bool
  /// The type's fields in declaration order; a field's index here is its index in
  /// ``RecordState/fields`` and its bit in a ``FieldMask`` (so at most 64).
  public var fields: [FieldSpec]

  /// What its records must not share, or nil when any number may share anything.
  public var uniqueness: Uniqueness?
  /// The schema version that added the type (`since N`; 1 for the first version).
  public var since: Int

  /// A record type; plain (its records can be updated) unless `appendOnly`.
  public init(name: String, appendOnly: Bool = false, fields: [FieldSpec], uniqueness: Uniqueness? = nil, since: Int = 1) {
    self.name = name
    self.appendOnly = appendOnly
    self.fields = fields
    self.uniqueness = uniqueness
    self.since = since
  }

  /// The fields whose values make a record's unique key (none for a singleton), or nil when
  /// the type has no uniqueness.
  public var uniqueKeyFields: [Int]? {
    switch uniqueness {
    case nil: nil
    case .singleton: []
    case .fields(let f): f
    }
  }

  /// The index of the field called `name`, or nil when the type has none.
  public func fieldIndex(named name: String) -> Int? { fields.firstIndex { $0.name == name } }
}

/// The schema shared by every device and the server.
public struct Schema: Hashable, Sendable {
  /// The record types in declaration order; a type's index here is ``RecordState/type``.
  public var types: [RecordType]
  /// Types deployed to the production schema; `nil` means all.
  public var deployed: [String]?
  /// The app's own model that some of the types were read from (`schema from PATH`), with what
  /// the importer found about it; nil when every type is the scenario's own.
  public var imported: SchemaImport?

  /// A schema of `types`; `deployed` lists the types deployed to production (nil: all of them);
  /// `imported` says which of them were read from the app's model.
  public init(types: [RecordType], deployed: [String]? = nil, imported: SchemaImport? = nil) {
    self.types = types
    self.deployed = deployed
    self.imported = imported
  }

  /// The index of the type called `name`, or nil when the schema has none.
  public func typeIndex(named name: String) -> Int? { types.firstIndex { $0.name == name } }

  /// The latest schema version: the largest `since` of a type or field (1 without any).
  public var latestVersion: Int { types.reduce(1) { max($0, $1.fields.reduce($1.since) { max($0, $1.since) }) } }

  /// Whether the type at `typeIndex` is deployed to the production schema (always, when
  /// ``deployed`` is nil).
  public func isDeployed(_ typeIndex: Int) -> Bool {
    deployed.map { $0.contains(types[typeIndex].name) } ?? true
  }
}

extension Schema {
  /// Whether the server accepts uploads of this type (CloudKit-safe and deployed).
  /// (The same rules as ``safetyFindings()``, without building messages.)
  public func acceptsUploads(ofType typeIndex: Int) -> Bool {
    let type = types[typeIndex]
    guard isDeployed(typeIndex) else { return false }
    return type.fields.allSatisfy { f in
      if f.unique { return false }
      if case .ref = f.kind { return f.optional && f.onDelete != .deny && !f.ordered && f.hasInverse }
      return f.optional || f.defaultValue != nil
    }
  }
}
