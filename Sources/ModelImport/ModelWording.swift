/// The words of the importer's CloudKit findings, in the model's own terms: Swift for a SwiftData
/// model (``give `title` a default value: `var title: String = ""` ``), the Data Model
/// inspector's for a Core Data model (`set a Default Value for attribute \`title\` of entity
/// \`Note\``). Every warning about one of Apple's CloudKit rules is worded here, once; `sim-cli
/// import` prints them, and `sim-cli check` prints the same ones for a scenario that reads the
/// model with `schema from`.
struct ModelWording {
  let source: ModelSource
  var swift: Bool { source == .swiftData }

  /// A declaration and the entities that hold it: the declaring one, and the entities that
  /// inherit it (Core Data parent entities), in model order.
  struct Holder {
    /// The entity that declares the property or constraint.
    var declaring: String
    /// The non-abstract entities that hold it (the declaring one first, when it is not abstract).
    var heirs: [String]

    /// `Item.title`, or `Item.title (inherited by Book and Film)` when others hold it.
    func subject(_ property: String?) -> String {
      let name = property.map { "\(declaring).\($0)" } ?? declaring
      // (The declaring entity, when it holds its own declarations, is the first heir.)
      let others = heirs.first == declaring ? heirs.dropFirst() : heirs[...]
      return others.isEmpty ? name : "\(name) (inherited by \(ModelWording.listed(others)))"
    }

    /// `Book and Film`: whose records the declaration concerns.
    var records: String { ModelWording.listed(heirs.isEmpty ? [declaring] : heirs) }
  }

  /// `a`, `a and b`, `a, b and c`; past five, `a, b, c, d, e and 7 more`.
  static func listed(_ names: some BidirectionalCollection<String>) -> String {
    guard names.count > 1, let last = names.last else { return names.first ?? "" }
    if names.count > 5 { return names.prefix(5).joined(separator: ", ") + " and \(names.count - 5) more" }
    return names.dropLast().joined(separator: ", ") + " and " + last
  }

  static func lowerFirst(_ s: String) -> String { s.prefix(1).lowercased() + s.dropFirst() }

  /// A Swift default for a property of this kind and type, when there is an obvious one.
  static func swiftZero(_ kind: RawKind, typeText: String) -> String? {
    switch kind {
    case .string: "\"\""
    case .int, .double: "0"
    case .bool: "false"
    case .date: ".now"
    case .bytes: "Data()"
    case .opaque: typeText.hasPrefix("[") ? "[]" : nil
    case .relationship: nil
    }
  }

  // MARK: The rules

  /// `required-without-default`: an attribute neither optional nor defaulted.
  func requiredAttribute(_ p: RawProperty, _ holder: Holder) -> (message: String, fix: String) {
    let message =
      "\(holder.subject(p.name)) is neither optional nor defaulted: CloudKit cannot require a field, so the store refuses to load with CloudKit enabled, and a record synced without it would be invalid; it is imported as required, so \(holder.records) records never upload in a run."
    guard swift else {
      return (message, "set a Default Value for attribute `\(p.name)` of entity `\(holder.declaring)` in the Data Model inspector, or tick Optional")
    }
    let type = p.typeText.hasSuffix("!") ? String(p.typeText.dropLast()) : p.typeText
    if let zero = Self.swiftZero(p.kind, typeText: type) {
      return (message, "give `\(p.name)` a default value: `var \(p.name): \(type) = \(zero)`, or make it optional: `var \(p.name): \(type)?`")
    }
    return (message, "give `\(p.name)` a default value (`var \(p.name): \(type) = …`), or make it optional: `var \(p.name): \(type)?`")
  }

  /// `required-reference`: a relationship that is not optional.
  func requiredRelationship(_ p: RawProperty, _ holder: Holder, destination: String, toMany: Bool) -> (message: String, fix: String) {
    let message =
      "\(holder.subject(p.name)) is a required relationship: CloudKit may deliver a record before the one it refers to, so the store refuses to load with CloudKit enabled"
      + (toMany ? "." : "; it is imported as a non-optional reference, so \(holder.records) records never upload in a run.")
    guard swift else {
      return (message, "tick Optional for relationship `\(p.name)` of entity `\(holder.declaring)` in the Data Model inspector")
    }
    return (
      message,
      toMany
        ? "make `\(p.name)` optional: `var \(p.name): [\(destination)]? = []`" : "make `\(p.name)` optional: `var \(p.name): \(destination)?`"
    )
  }

  /// `deny-delete-rule`: the Deny delete rule, on the relationship that has it (`importedOn`:
  /// the type whose reference is imported with `on-delete deny`, when one is).
  func deny(_ p: RawProperty, _ holder: Holder, importedOn: String?) -> (message: String, fix: String) {
    let message =
      "\(holder.subject(p.name)) has the Deny delete rule: CloudKit does not enforce it, so another device can still delete the record it protects"
      + (importedOn.map { "; the reference of \($0) to it is imported with `on-delete deny`, so \($0) records never upload in a run." } ?? ".")
    return (
      message,
      swift
        ? "change `deleteRule: .deny` on `\(p.name)` to `.nullify` or `.cascade`, and check for dependents in code before deleting"
        : "set the Delete Rule of relationship `\(p.name)` of entity `\(holder.declaring)` to Nullify or Cascade in the Data Model inspector, and check for dependents in code before deleting"
    )
  }

  /// `no-action-rule`: the No Action delete rule (simulated as nullify).
  func noAction(_ p: RawProperty, _ holder: Holder) -> (message: String, fix: String) {
    (
      "\(holder.subject(p.name)) has the No Action delete rule: deleting leaves dangling references on other devices; it is simulated as nullify.",
      swift
        ? "change `deleteRule: .noAction` on `\(p.name)` to `.nullify` (the default) or `.cascade`"
        : "set the Delete Rule of relationship `\(p.name)` of entity `\(holder.declaring)` to Nullify or Cascade in the Data Model inspector"
    )
  }

  /// `ordered-relationship`: a Core Data ordered relationship.
  func ordered(_ p: RawProperty, _ holder: Holder, destination: String) -> (message: String, fix: String) {
    (
      "\(holder.subject(p.name)) is an ordered relationship: CloudKit does not keep an order, and a store with one does not sync; the referring records are imported with `ordered`, so they never upload in a run.",
      "untick Ordered for relationship `\(p.name)` of entity `\(holder.declaring)` in the Data Model inspector, and store an explicit position attribute (an Integer or a fractional index) on \(destination)"
    )
  }

  /// `missing-inverse`: a relationship without an inverse (a to-one is imported marked
  /// `no-inverse`; a to-many is not imported).
  func missingInverse(_ p: RawProperty, _ holder: Holder, destination: String, toMany: Bool) -> (message: String, fix: String) {
    let message =
      toMany
      ? "\(holder.subject(p.name)) has no inverse: CloudKit stores references on the child record, and without an inverse there is none; the relationship is not imported."
      : "\(holder.subject(p.name)) has no inverse: it is imported as a reference marked `no-inverse`; CloudKit needs the inverse, and a store without one does not sync, so \(holder.records) records never upload in a run."
    let owner = holder.declaring
    guard swift else {
      return (
        message,
        "relationship `\(p.name)` of entity `\(owner)` needs an Inverse: add a \(toMany ? "To One" : "To Many") relationship to \(owner) on entity \(destination) and choose it as the Inverse of `\(p.name)` in the Data Model inspector"
      )
    }
    let declaration =
      toMany
      ? "var \(Self.lowerFirst(owner)): \(owner)?" : "var \(Self.lowerFirst(owner))s: [\(owner)]? = []"
    return (message, "add the inverse to \(destination): `@Relationship(inverse: \\\(owner).\(p.name)) \(declaration)`")
  }

  /// `child-delete-rule`: Cascade or Deny on a to-one, which acts on the record referred to.
  func childRule(_ p: RawProperty, _ holder: Holder, rule: RawDeleteRule, destination: String) -> (message: String, fix: String) {
    (
      "\(holder.subject(p.name)) has the \(rule.sourceName) delete rule, so deleting this record \(rule == .cascade ? "deletes" : "is refused while it has") its \(destination); the scenario format cannot express a rule on this side, so it is not simulated.",
      swift
        ? "use `.nullify` on `\(p.name)` and put the delete rule on \(destination)'s to-many (`@Relationship(deleteRule: .\(rule == .cascade ? "cascade" : "deny"))`)"
        : "set the Delete Rule of relationship `\(p.name)` of entity `\(holder.declaring)` to Nullify and put the rule on \(destination)'s to-many relationship"
    )
  }

  /// `unique-constraint`: a uniqueness constraint (`imported`: it is imported as the field's
  /// `unique`, which a run rejects).
  func unique(_ c: RawUniqueness, _ holder: Holder, imported: Bool) -> (message: String, fix: String) {
    let listed = Self.listed(c.fields)
    let subject = holder.subject(nil)
    let message =
      "\(subject) is unique by \(listed): CloudKit cannot enforce it, so two devices can each create a record with the same \(listed) and both survive the sync"
      + (imported ? "; it is imported as `unique`, so \(holder.records) records never upload in a run." : ".")
    let why = "and derive the record name from the key (de-duplicating after the fact loses the duplicate's writes, and can delete both copies)"
    guard swift else {
      let constraint = c.fields.joined(separator: ",")
      return (
        message, "remove the constraint `\(constraint)` from the Constraints of entity `\(holder.declaring)` in the Data Model inspector \(why)"
      )
    }
    if c.fromAttribute, let field = c.fields.first {
      return (message, (c.alone ? "remove `@Attribute(.unique)` from `\(field)` " : "remove `.unique` from the `@Attribute` of `\(field)` ") + why)
    }
    let keyPaths = c.fields.map { "\\.\($0)" }.joined(separator: ", ")
    return (message, "remove `[\(keyPaths)]` from the `#Unique<\(holder.declaring)>` " + why)
  }

  /// `field-renamed`: a property renamed between versions.
  func renamed(_ p: RawProperty, _ holder: Holder, from old: String) -> (message: String, fix: String) {
    (
      "\(holder.subject(p.name)) was renamed from \(old): CloudKit sees a new field \(p.name), and old app versions keep writing \(old).",
      swift
        ? "keep the old name in the schema (rename only in code, with `originalName`) or keep writing both fields until every device has updated"
        : "keep the attribute's old name in the model (rename only the property in code) or keep writing both fields until every device has updated"
    )
  }
}
