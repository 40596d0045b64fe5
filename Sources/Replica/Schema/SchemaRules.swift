/// A `ref` field that refers to records of some type: who refers, through which field, and what
/// its delete rule does.
package struct Referrer: Hashable, Sendable {
  package var type: Int32
  package var field: Int32
  package var rule: DeleteRule
}

/// What a schema's references, uniqueness and versions ask of devices, precomputed once per
/// run so that the hot paths read arrays instead of searching the schema.
package struct SchemaRules: Sendable {
  /// Per type: the `ref` fields (of any type) that refer to it.
  package var referrers: [[Referrer]]
  /// Per type: its `ref` fields, as (field, referenced type).
  package var refFields: [[(field: Int32, target: Int32)]]
  /// Whether any field is a `ref` to a declared type.
  package var hasReferences: Bool
  /// Whether any type is `singleton` or `unique-by`.
  package var hasUniqueness: Bool
  /// The latest schema version (1 without any `since`).
  package var latestVersion: Int
  /// Per type: per field, the version that added it (the field's `since`).
  package var fieldSince: [[Int]]
  /// Per type: its `parent` field (the record's `CKRecord.parent`), if it has one.
  package var parentField: [Int32?]
  /// Whether any type has a `parent` field.
  package var hasParents: Bool
  /// Per type: its `asset` fields.
  package var assetFields: [[Int32]]
  /// Whether any type has an `asset` field.
  package var hasAssets: Bool

  package init(_ schema: Schema) {
    var referrers = Array(repeating: [Referrer](), count: schema.types.count)
    var refFields = Array(repeating: [(field: Int32, target: Int32)](), count: schema.types.count)
    var latest = 1
    for (t, type) in schema.types.enumerated() {
      latest = max(latest, type.since)
      for (f, field) in type.fields.enumerated() {
        latest = max(latest, field.since)
        guard let name = field.referencedType, let target = schema.typeIndex(named: name) else { continue }
        referrers[target].append(Referrer(type: Int32(t), field: Int32(f), rule: field.onDelete))
        refFields[t].append((Int32(f), Int32(target)))
      }
    }
    self.referrers = referrers
    self.refFields = refFields
    hasReferences = refFields.contains { !$0.isEmpty }
    hasUniqueness = schema.types.contains { $0.uniqueness != nil }
    latestVersion = latest
    fieldSince = schema.types.map { $0.fields.map(\.since) }
    parentField = schema.types.map { type in type.fields.firstIndex { $0.isParent && $0.referencedType != nil }.map(Int32.init) }
    hasParents = parentField.contains { $0 != nil }
    assetFields = schema.types.map { type in type.fields.indices.filter { type.fields[$0].kind == .asset }.map(Int32.init) }
    hasAssets = assetFields.contains { !$0.isEmpty }
  }

  /// Whether a device running app version `version` knows field `field` of type `type`.
  @inlinable
  package func knows(version: Int, type: Int32, field: Int) -> Bool {
    version >= latestVersion || fieldSince[Int(type)][field] <= version
  }
}
