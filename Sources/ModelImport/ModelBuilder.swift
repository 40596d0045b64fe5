/// Turns raw model versions into the scenario types of the latest version, with the findings.
struct ModelBuilder {
  var log: FindingLog
  let source: ModelSource
  static let maximumFields = 64
  var wording: ModelWording { ModelWording(source: source) }
  /// Per declaring entity, the entities of the latest version that hold its properties and
  /// constraints (itself first when it is not abstract): a declaration is reported once, at the
  /// first of them, in the name of the entity that declares it.
  var heirs: [String: [String]] = [:]
  /// Per entity of the latest version, the parent entities it inherits a property or a
  /// constraint from: a relationship whose destination is one of them reaches the entity too.
  var ancestors: [String: Set<String>] = [:]

  init(log: FindingLog, source: ModelSource) {
    self.log = log
    self.source = source
  }

  /// Who holds a declaration of `declaring` (an entity of the latest version, or one that its
  /// heirs inherit from).
  func holder(_ declaring: String) -> ModelWording.Holder {
    ModelWording.Holder(declaring: declaring, heirs: heirs[declaring] ?? [declaring])
  }

  /// Whether `entity` reports the declarations of `declaring`: it is the first that holds them.
  func reports(_ entity: String, for declaring: String) -> Bool { (heirs[declaring]?.first ?? entity) == entity }

  /// ``heirs`` of the latest version.
  static func heirs(of version: RawVersion) -> [String: [String]] {
    var heirs: [String: [String]] = [:]
    var seen: Set<[String]> = []
    func add(_ declaring: String, _ entity: String) {
      if seen.insert([declaring, entity]).inserted { heirs[declaring, default: []].append(entity) }
    }
    // Each entity first in its own list (Xcode writes entities in alphabetical order: a child
    // may come before its parent), then the entities that inherit from it, in model order.
    for e in version.entities { add(e.name, e.name) }
    for e in version.entities {
      for p in e.properties { add(p.inheritedFrom ?? e.name, e.name) }
      for u in e.uniqueness { add(u.entity, e.name) }
    }
    return heirs
  }

  mutating func build(versions: [RawVersion], versionNames: [String], origin: String) -> ImportedModel {
    guard let latest = versions.last else {
      return ImportedModel(source: source, origin: origin, versions: versionNames, types: [], findings: sorted(log.findings))
    }
    var typeNames: [String: String] = [:]
    var usedTypeNames: Set<String> = []
    for entity in latest.entities where typeNames[entity.name] == nil {
      let name = unique(sanitized(entity.name, at: entity.location, what: "type"), in: &usedTypeNames)
      typeNames[entity.name] = name
    }
    heirs = Self.heirs(of: latest)
    for e in latest.entities {
      var above = Set(e.properties.compactMap(\.inheritedFrom)).union(e.uniqueness.map(\.entity))
      if let parent = e.parent { above.insert(parent) }
      above.remove(e.name)
      if !above.isEmpty { ancestors[e.name, default: []].formUnion(above) }
    }
    let (typeSince, fieldSince) = versionFindings(versions)
    var types: [ImportedType] = []
    var built: Set<String> = []
    var scenarioFieldNames: [String: [String: String]] = [:]
    for (entityIndex, entity) in latest.entities.enumerated() {
      guard let typeName = typeNames[entity.name], built.insert(typeName).inserted else { continue }
      let since = typeSince[entity.name] ?? 1
      var type = ImportedType(name: typeName, location: entity.location, since: since, fields: [])
      var usedFieldNames: Set<String> = []
      var fieldNames: [String: String] = [:]
      for (propertyIndex, p) in entity.properties.enumerated() {
        // A declaration that several entities inherit is reported by the first of them only.
        let logged = log.findings.count
        let field = fieldFor(p, in: entity, entityIndex: entityIndex, propertyIndex: propertyIndex, latest: latest, typeNames: typeNames)
        if !reports(entity.name, for: p.inheritedFrom ?? entity.name) { log.findings.removeLast(log.findings.count - logged) }
        guard var field else { continue }
        if fieldNames[p.name] != nil { continue }
        field.name = unique(sanitized(p.name, at: p.location, what: "field"), in: &usedFieldNames)
        field.since = max(since, fieldSince["\(entity.name).\(p.name)"] ?? 1)
        fieldNames[p.name] = field.name
        type.fields.append(field)
      }
      scenarioFieldNames[typeName] = fieldNames
      applyUniqueness(entity, to: &type, fieldNames: fieldNames)
      if type.fields.count > Self.maximumFields {
        // At most 20 names: a deep hierarchy drops thousands per type, and the warnings would
        // grow with the square of the model.
        let dropped = type.fields[Self.maximumFields...].prefix(20).map(\.name)
        let more = type.fields.count - Self.maximumFields - dropped.count
        log.warning(
          type.fields[Self.maximumFields].location, "too-many-fields",
          "\(type.name) has \(type.fields.count) fields; a scenario type holds at most \(Self.maximumFields), so \(dropped.joined(separator: ", "))\(more > 0 ? " and \(more) more" : "") are left out.",
          apple: "",
          fix: "split the model, or edit the scenario to keep the fields whose conflicts matter", about: ModelSubject(entity: entity.name))
        type.fields.removeLast(type.fields.count - Self.maximumFields)
        type.uniqueBy = type.uniqueBy.filter { u in type.fields.contains { $0.name == u } }
      }
      types.append(type)
    }
    // What each finding is about, by the scenario's names: a declaration of an abstract entity
    // is its first heir's.
    for i in log.findings.indices {
      guard let entity = log.findings[i].type else { continue }
      let typeName = typeNames[entity] ?? heirs[entity]?.first(where: { typeNames[$0] != nil }).flatMap { typeNames[$0] }
      if let property = log.findings[i].field {
        log.findings[i].field = typeName.flatMap { scenarioFieldNames[$0]?[property] } ?? property
      }
      log.findings[i].type = typeName ?? entity
      log.findings[i].blocks = log.findings[i].blocks.compactMap { typeNames[$0] }
    }
    return ImportedModel(source: source, origin: origin, versions: versionNames, types: types, findings: sorted(log.findings))
  }

  /// The findings in order of place, each once.
  func sorted(_ findings: [ImportFinding]) -> [ImportFinding] {
    var seen: Set<ImportFinding> = []
    return findings.filter { seen.insert($0).inserted }.sorted { a, b in
      if a.location != b.location { return a.location < b.location }
      if a.rule != b.rule { return a.rule < b.rule }
      return a.message < b.message
    }
  }

  // MARK: Names

  /// A name of the scenario grammar (`[A-Za-z][A-Za-z0-9_-]*`), with a note when it changes.
  mutating func sanitized(_ name: String, at location: SourceLocation, what: String) -> String {
    var out = ""
    for s in name.unicodeScalars {
      let ok = (s >= "A" && s <= "Z") || (s >= "a" && s <= "z") || (s >= "0" && s <= "9") || s == "_" || s == "-"
      if out.isEmpty && !((s >= "A" && s <= "Z") || (s >= "a" && s <= "z")) { continue }
      out.unicodeScalars.append(ok ? s : "_")
    }
    if out.isEmpty { out = what == "type" ? "Type" : "field" }
    if out != name {
      log.note(location, "name-sanitized", "The \(what) name \(name) is not a scenario name ([A-Za-z][A-Za-z0-9_-]*); it is written as \(out).")
    }
    return out
  }

  func unique(_ name: String, in used: inout Set<String>) -> String {
    var candidate = name
    var n = 2
    while used.contains(candidate) {
      candidate = "\(name)_\(n)"
      n += 1
    }
    used.insert(candidate)
    return candidate
  }

  // MARK: Versions

  /// The first version (from 1) of each type and field of the latest version, and the warnings
  /// about removed, renamed and changed ones.
  mutating func versionFindings(_ versions: [RawVersion]) -> (types: [String: Int], fields: [String: Int]) {
    var typeSince: [String: Int] = [:]
    var fieldSince: [String: Int] = [:]
    guard let latest = versions.last else { return ([:], [:]) }
    for entity in latest.entities {
      for p in entity.properties where p.originalName != nil && reports(entity.name, for: p.inheritedFrom ?? entity.name) {
        let old = p.originalName!
        let declaring = p.inheritedFrom ?? entity.name
        let (message, fix) = wording.renamed(p, holder(declaring), from: old)
        log.warning(
          p.location, "field-renamed", message, apple: AppleRule.schemaAdditive, fix: fix, about: ModelSubject(entity: declaring, property: p.name))
      }
    }
    guard versions.count >= 2 else { return ([:], [:]) }
    for entity in latest.entities {
      typeSince[entity.name] = (versions.firstIndex { $0.entities.contains { $0.name == entity.name } } ?? versions.count - 1) + 1
      for p in entity.properties {
        let names = [p.name] + (p.originalName.map { [$0] } ?? [])
        var first: Int?
        var changed: (version: Int, kind: String)?
        for (i, v) in versions.enumerated() {
          guard let old = v.entities.first(where: { $0.name == entity.name })?.properties.first(where: { names.contains($0.name) }) else { continue }
          if first == nil { first = i + 1 }
          if i < versions.count - 1 && !sameKind(old, p) { changed = (i + 1, old.typeText) }
        }
        fieldSince["\(entity.name).\(p.name)"] = first ?? versions.count
        let declaring = p.inheritedFrom ?? entity.name
        if let changed, reports(entity.name, for: declaring) {
          log.warning(
            p.location, "field-kind-changed",
            "\(holder(declaring).subject(p.name)) was \(changed.kind) in version \(changed.version) and is \(p.typeText) now: CloudKit keeps the old field type, and old app versions write the old kind.",
            apple: AppleRule.schemaAdditive,
            fix: "add a new field with the new type and migrate the values in code; keep the old field",
            about: ModelSubject(entity: declaring, property: p.name))
        }
      }
    }
    // Types and fields present before and missing now: the last location each was seen.
    var removedTypes: [(name: String, location: SourceLocation)] = []
    var removedFields: [(key: String, location: SourceLocation)] = []
    for v in versions.dropLast() {
      for e in v.entities {
        guard let now = latest.entities.first(where: { $0.name == e.name }) else {
          if let k = removedTypes.firstIndex(where: { $0.name == e.name }) {
            removedTypes[k].location = e.location
          } else {
            removedTypes.append((e.name, e.location))
          }
          continue
        }
        for q in e.properties where !now.properties.contains(where: { $0.name == q.name || $0.originalName == q.name }) {
          // (Keyed by the entity that declares it: each heir holds a copy.)
          let key = "\(q.inheritedFrom ?? e.name).\(q.name)"
          if let k = removedFields.firstIndex(where: { $0.key == key }) {
            removedFields[k].location = q.location
          } else {
            removedFields.append((key, q.location))
          }
        }
      }
    }
    for t in removedTypes {
      log.warning(
        t.location, "type-removed",
        "\(t.name) was in an older version and is gone from the latest: CloudKit keeps the record type, and old app versions keep writing it.",
        apple: AppleRule.schemaAdditive, fix: "keep \(t.name) in the model (unused) until no old app version can sync",
        about: ModelSubject(entity: t.name))
    }
    for f in removedFields {
      log.warning(
        f.location, "field-removed",
        "\(f.key) was in an older version and is gone from the latest: CloudKit keeps the field, and old app versions keep writing it.",
        apple: AppleRule.schemaAdditive, fix: "keep the field in the model (unused, optional) until no old app version can sync",
        about: ModelSubject(entity: String(f.key.prefix { $0 != "." }), property: String(f.key.drop { $0 != "." }.dropFirst())))
    }
    return (typeSince, fieldSince)
  }

  func sameKind(_ a: RawProperty, _ b: RawProperty) -> Bool {
    switch (a.kind, b.kind) {
    case (.relationship(let x, let m), .relationship(let y, let n)): x == y && m == n
    default: a.kind.scenarioKind == b.kind.scenarioKind
    }
  }

  // MARK: Fields

  func entity(_ name: String, in version: RawVersion) -> (index: Int, entity: RawEntity)? {
    guard let i = version.entities.firstIndex(where: { $0.name == name }) else { return nil }
    return (i, version.entities[i])
  }

  /// The relationship on the other side of `p` (declared by either side, or inferred for
  /// SwiftData when there is exactly one candidate each way).
  func partner(of p: RawProperty, in e: RawEntity, latest: RawVersion) -> (entity: RawEntity, property: RawProperty, index: Int, inferred: Bool)? {
    // A destination that is an abstract parent entity (not a type) is read as the first entity
    // that inherits from it: each holds a copy of the parent's relationships.
    guard case .relationship(let destination, _) = p.kind,
      let (yi, y) = entity(destination, in: latest) ?? heirs[destination]?.lazy.compactMap({ self.entity($0, in: latest) }).first
    else { return nil }
    func targets(_ q: RawProperty, _ name: String) -> Bool {
      if case .relationship(let t, _) = q.kind { return t == name || (ancestors[name]?.contains(t) ?? false) }
      return false
    }
    if let inverse = p.inverse {
      if let s = y.properties.first(where: { $0.name == inverse && targets($0, e.name) }) { return (y, s, yi, false) }
      return nil
    }
    if let s = y.properties.first(where: { $0.inverse == p.name && targets($0, e.name) && !(y.name == e.name && $0.name == p.name) }) {
      return (y, s, yi, false)
    }
    guard source == .swiftData else { return nil }
    let claimed = Set(e.properties.compactMap(\.inverse))
    let candidates = y.properties.filter {
      targets($0, e.name) && $0.inverse == nil && !claimed.contains($0.name) && !(y.name == e.name && $0.name == p.name)
    }
    let mine = e.properties.filter { m in targets(m, y.name) && m.inverse == nil && !y.properties.contains { q in q.inverse == m.name } }
    guard candidates.count == 1, mine.count == 1, y.name != e.name else { return nil }
    return (y, candidates[0], yi, true)
  }

  mutating func fieldFor(
    _ p: RawProperty, in e: RawEntity, entityIndex: Int, propertyIndex: Int, latest: RawVersion, typeNames: [String: String]
  ) -> ImportedField? {
    // Findings name the entity that declares the property (a parent entity, for an inherited
    // one), and the entities whose records it concerns.
    let declaring = p.inheritedFrom ?? e.name
    let holder = holder(declaring)
    // (Worded only when a finding needs it: a parent of thousands of heirs is named often.)
    var qualified: String { holder.subject(p.name) }
    let about = ModelSubject(entity: declaring, property: p.name)
    guard case .relationship(let destination, let toMany) = p.kind else {
      var field = ImportedField(name: p.name, location: p.location, kind: p.kind.scenarioKind, optional: p.optional, unique: p.unique)
      if p.hasDefault {
        field.defaultLiteral = p.defaultLiteral ?? p.kind.scenarioKind.zeroLiteral
        if p.defaultLiteral == nil {
          let zero = p.kind.scenarioKind.zeroLiteral ?? ""
          let why =
            p.kind.scenarioKind == .date
            ? "a date default is written as a duration from the start of the run" : "it is not a literal of kind \(field.kind.scenarioName)"
          log.note(
            p.location, "default-approximated",
            "The default `\(p.defaultText ?? "?")` of \(qualified) is kept as \"has a default\" but written as \(zero): \(why).", about: about)
        }
      }
      if !p.optional && !p.hasDefault {
        let (message, fix) = wording.requiredAttribute(p, holder)
        log.warning(
          p.location, "required-without-default", message, apple: AppleRule.optionalOrDefault, fix: fix, about: about.blocking(holder.heirs))
      }
      return field
    }
    let destinationName = typeNames[destination]
    if destinationName == nil && !toMany {
      log.note(
        p.location, "unreadable-source",
        "The destination \(destination) of \(qualified) is not a type of the latest version; the relationship is not read.", about: about)
      return nil
    }
    if !p.optional {
      let (message, fix) = wording.requiredRelationship(p, holder, destination: destination, toMany: toMany)
      log.warning(
        p.location, "required-reference", message, apple: AppleRule.optionalRelationships, fix: fix, about: about.blocking(toMany ? [] : holder.heirs)
      )
    }
    let other = partner(of: p, in: e, latest: latest)
    // The entities holding the reference on the other side, which carries this side's delete
    // rule and order (the child's, or the other one's of a one-to-one).
    let otherHolders: [String] =
      if let other, case .relationship(_, false) = other.property.kind {
        self.holder(other.property.inheritedFrom ?? other.entity.name).heirs
      } else {
        []
      }
    if p.deleteRule == .deny {
      // The rule lands on the other side's reference (the child's, or the other one's of a
      // one-to-one).
      let importedOn: String? =
        if let other, case .relationship(_, false) = other.property.kind {
          other.property.inheritedFrom.map { self.holder($0).records } ?? typeNames[other.entity.name]
        } else {
          nil
        }
      let (message, fix) = wording.deny(p, holder, importedOn: importedOn)
      log.warning(p.location, "deny-delete-rule", message, apple: AppleRule.deny, fix: fix, about: about.blocking(otherHolders))
    }
    if p.deleteRule == .noAction {
      let (message, fix) = wording.noAction(p, holder)
      log.warning(p.location, "no-action-rule", message, apple: "", fix: fix, about: about)
    }
    if p.ordered {
      let (message, fix) = wording.ordered(p, holder, destination: destination)
      log.warning(p.location, "ordered-relationship", message, apple: AppleRule.ordered, fix: fix, about: about.blocking(otherHolders))
    }
    if let inverse = p.inverse, other == nil {
      log.note(
        p.location, "unreadable-source",
        "The inverse \(destination).\(inverse) of \(qualified) is not a relationship back to \(e.name); read as having no inverse.", about: about)
    }
    if let other, other.inferred,
      (entityIndex, propertyIndex) < (other.index, other.entity.properties.firstIndex { $0.name == other.property.name } ?? 0)
    {
      log.note(
        p.location, "inverse-inferred",
        "\(qualified) and \(destination).\(other.property.name) declare no inverse; SwiftData pairs them because each is the only candidate.",
        fix: "state it: `@Relationship(inverse: \\\(destination).\(other.property.name))`", about: about)
    }
    if toMany {
      guard let other else {
        let (message, fix) = wording.missingInverse(p, holder, destination: destination, toMany: true)
        log.warning(p.location, "missing-inverse", message, apple: AppleRule.inverses, fix: fix, about: about)
        return nil
      }
      if case .relationship(_, true) = other.property.kind {
        if (entityIndex, propertyIndex) <= (other.index, other.entity.properties.firstIndex { $0.name == other.property.name } ?? 0) {
          // A note, not a warning: Core Data's CloudKit store syncs many-to-many relationships
          // (Apple, Reading CloudKit Records for Core Data: it stores a relationship according
          // to its cardinality, a many-to-many one as records of its own); only the simulator
          // leaves them out.
          log.note(
            p.location, "many-to-many",
            "\(qualified) and \(destination).\(other.property.name) are a many-to-many relationship, which CloudKit syncs (as a record of its own per link) but the simulator does not model; it is not imported.",
            fix: "model the link as its own type with a to-one to each side (a join record), if its conflicts matter", about: about)
        }
      }
      return nil
    }
    var field = ImportedField(name: p.name, location: p.location, kind: .ref(destinationName!), optional: p.optional, unique: p.unique)
    guard let other else {
      let (message, fix) = wording.missingInverse(p, holder, destination: destination, toMany: false)
      log.warning(p.location, "missing-inverse", message, apple: AppleRule.inverses, fix: fix, about: about.blocking(holder.heirs))
      childRuleNote(p, holder)
      field.hasInverse = false
      return field
    }
    field.inverseOf = "\(other.entity.name).\(other.property.name)"
    // The order lives on the to-many side; the reference that represents it carries it.
    if other.property.ordered { field.ordered = true }
    switch other.property.deleteRule ?? .nullify {
    case .cascade: field.onDelete = .cascade
    case .deny: field.onDelete = .deny
    case .nullify, .noAction: field.onDelete = .nullify
    }
    if case .relationship(_, true) = other.property.kind { childRuleNote(p, holder) }
    return field
  }

  /// A Cascade or Deny rule on a child's to-one (deleting the child acts on the parent): the
  /// scenario format cannot say it.
  mutating func childRuleNote(_ p: RawProperty, _ holder: ModelWording.Holder) {
    guard let rule = p.deleteRule, rule == .cascade || rule == .deny, case .relationship(let destination, _) = p.kind else { return }
    let (message, fix) = wording.childRule(p, holder, rule: rule, destination: destination)
    log.warning(
      p.location, "child-delete-rule", message, apple: rule == .deny ? AppleRule.deny : "", fix: fix,
      about: ModelSubject(entity: holder.declaring, property: p.name))
  }

  // MARK: Uniqueness

  mutating func applyUniqueness(_ e: RawEntity, to type: inout ImportedType, fieldNames: [String: String]) {
    var constraints = e.uniqueness
    for p in e.properties where p.unique {
      constraints.append(
        RawUniqueness(fields: [p.name], location: p.location, fromAttribute: true, entity: p.inheritedFrom ?? e.name, alone: p.uniqueAlone))
    }
    constraints.sort { $0.location < $1.location }
    for i in type.fields.indices { type.fields[i].unique = false }
    for c in constraints {
      let names = c.fields.compactMap { fieldNames[$0] }
      let listed = c.fields.joined(separator: ", ")
      // A constraint that several entities inherit is reported by the first of them only.
      let report = reports(e.name, for: c.entity)
      let imported = names.count == 1 && names.count == c.fields.count && type.fields.contains { $0.name == names[0] }
      if report {
        let (message, fix) = wording.unique(c, holder(c.entity), imported: imported)
        log.warning(
          c.location, "unique-constraint", message, apple: AppleRule.unique, fix: fix,
          about: ModelSubject(
            entity: c.entity, property: c.fields.count == 1 ? c.fields[0] : nil, blocks: imported ? holder(c.entity).heirs : []))
      }
      guard names.count == c.fields.count else {
        if report {
          log.note(
            c.location, "unreadable-source",
            "The uniqueness constraint on \(listed) names a field that is not imported; it is not written to the scenario.",
            about: ModelSubject(entity: c.entity))
        }
        continue
      }
      if names.count == 1, let i = type.fields.firstIndex(where: { $0.name == names[0] }) { type.fields[i].unique = true }
      if type.uniqueBy.isEmpty {
        type.uniqueBy = names
      } else if report, names.count > 1 || !type.fields.contains(where: { $0.name == names[0] && $0.unique }) {
        log.note(
          c.location, "unreadable-source", "A scenario type has one unique-by; the constraint on \(listed) is not written to the scenario.",
          about: ModelSubject(entity: c.entity))
      }
    }
  }
}

/// Spelling for the scenario format.
enum ScenarioText {
  /// A string literal with `\"`, `\\` and `\n` escaped.
  static func quoted(_ s: String) -> String {
    var out = "\""
    for c in s.unicodeScalars {
      switch c {
      case "\"": out += "\\\""
      case "\\": out += "\\\\"
      case "\n": out += "\\n"
      default: out.unicodeScalars.append(c)
      }
    }
    return out + "\""
  }
}
