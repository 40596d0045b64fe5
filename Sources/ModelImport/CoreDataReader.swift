/// Reads Core Data model versions (`contents` XML files) into raw versions.
struct CoreDataReader {
  var log = FindingLog()

  static let stringTypes: Set<String> = ["String"]
  static let intTypes: Set<String> = ["Integer 16", "Integer 32", "Integer 64"]
  static let doubleTypes: Set<String> = ["Double", "Float", "Decimal"]
  static let opaqueTypes: Set<String> = ["UUID", "URI", "Transformable", "ObjectID"]
  static let silentElements: Set<String> = ["elements", "element", "configuration", "fetchRequest", "userInfo", "entry", "memberEntity"]

  /// One version; `report` adds findings (only the latest version's are wanted).
  mutating func read(name: String, file: String, text: String, report: Bool) throws(ImportError) -> RawVersion {
    let document = try XMLReader.parse(text, file: file)
    guard let model = document.children.first(where: { $0.name == "model" }) else {
      throw ImportError(
        reason: .malformed, path: file, location: SourceLocation(file: file, line: 1, column: 1),
        message: "no <model> element: this is not a Core Data model")
    }
    var entities: [RawEntity] = []
    for child in model.children {
      switch child.name {
      case "entity":
        if let entity = readEntity(child, report: report) { entities.append(entity) }
      case _ where Self.silentElements.contains(child.name):
        continue
      default:
        if report { log.note(child.location, "unreadable-source", "The element <\(child.name)> of the model is not understood; it is ignored.") }
      }
    }
    return RawVersion(name: name, entities: try flatten(entities, file: file, report: report))
  }

  /// The most attributes, relationships and uniqueness constraints the entities of one model
  /// version may inherit, in all. Each entity holds a copy of every ancestor's, so a parentEntity
  /// chain of n entities with one attribute each makes n²/2 copies (2,000 entities: 2 million,
  /// with a finding or a dropped field for most): past this cap the version is refused.
  static let maximumInherited = 1_000_000

  /// The most inherited attributes and relationships an entity keeps, the farthest parents'
  /// first: a scenario type holds at most 64 fields, and a deep hierarchy would otherwise hold a
  /// copy of every ancestor's in every entity (a chain of 2,000 entities: two million copies,
  /// 788 MB). The entity is said to inherit more, with the number.
  static let maximumInheritedRead = 256

  /// Copies each entity's parent's properties into it (parent first); abstract entities are
  /// left out. Throws when the entities would inherit more than ``maximumInherited`` in all.
  ///
  /// An entity walks its chain of parents (the first entity of each name) until a name comes
  /// back or a parent is missing. For an entity that is the first of its name, that walk is its
  /// parent's and then the parent itself, so it is computed once per entity, parents first, and
  /// a chain costs what it copies; an entity in a loop of parents inherits the other members,
  /// each a slice of the loop written out twice. A second entity of a name (which Core Data
  /// does not allow) walks its chain as written, each parent counting at least one.
  mutating func flatten(_ entities: [RawEntity], file: String, report: Bool) throws(ImportError) -> [RawEntity] {
    let n = entities.count
    var byName: [String: Int] = [:]
    for (i, e) in entities.enumerated() where byName[e.name] == nil { byName[e.name] = i }
    let parents = entities.map { e in e.parent.flatMap { byName[$0] } }
    var total = 0
    func charge(_ e: RawEntity, _ from: (properties: Int, uniqueness: Int, depth: Int)) throws(ImportError) {
      total += from.properties + from.uniqueness
      if total > Self.maximumInherited { throw tooMuchInheritance(e, properties: from.properties, depth: from.depth, file: file) }
    }
    // The loops of parents, each in the order of the chain.
    var loops: [[Int]] = []
    var state = [UInt8](repeating: 0, count: n)  // not seen, on the path followed, done
    for i in 0..<n where state[i] == 0 {
      var path: [Int] = []
      var next: Int? = i
      while let j = next, state[j] == 0 {
        state[j] = 1
        path.append(j)
        next = parents[j]
      }
      if let j = next, state[j] == 1, let start = path.firstIndex(of: j) { loops.append(Array(path[start...])) }
      for j in path { state[j] = 2 }
    }
    var inherited: [Inheritance?] = Array(repeating: nil, count: n)
    for loop in loops {
      // Member j inherits from j + L - 1 (the farthest) down to j + 1, and its constraints
      // from j + 1 (the nearest) up to j + L - 1: runs of the loop written out twice.
      let count = loop.count
      var properties: [RawProperty] = []
      var propertyStart = [0]
      var uniqueness: [RawUniqueness] = []
      var uniquenessStart = [0]
      for m in 0..<(2 * count) {
        properties += Self.tagged(entities[loop[(2 * count - 1 - m) % count]])
        propertyStart.append(properties.count)
        uniqueness += entities[loop[m % count]].uniqueness
        uniquenessStart.append(uniqueness.count)
      }
      for (j, member) in loop.enumerated() {
        let p = propertyStart[count - j]..<propertyStart[2 * count - j - 1]
        let u = uniquenessStart[j + 1]..<uniquenessStart[j + count]
        try charge(entities[member], (p.count, u.count, count - 1))
        inherited[member] = Inheritance(
          properties: Array(properties[p].prefix(Self.maximumInheritedRead)), count: p.count, uniqueness: Array(uniqueness[u]), depth: count - 1)
      }
    }
    for i in 0..<n where byName[entities[i].name] == i && inherited[i] == nil {
      var path: [Int] = []
      var next: Int? = i
      while let j = next, inherited[j] == nil {
        path.append(j)
        next = parents[j]
      }
      for j in path.reversed() {
        let e = entities[j]
        guard let p = parents[j], let above = inherited[p] else {
          inherited[j] = Inheritance(missing: e.parent)
          continue
        }
        let parent = entities[p]
        try charge(e, (above.properties.count + parent.properties.count, above.uniqueness.count + parent.uniqueness.count, above.depth + 1))
        var here = above
        // A prefix of the whole list (farthest parents first) is a prefix of the child's too.
        if here.properties.count < Self.maximumInheritedRead {
          here.properties += Self.tagged(parent).prefix(Self.maximumInheritedRead - here.properties.count)
        }
        here.count += parent.properties.count
        here.uniqueness = parent.uniqueness + above.uniqueness
        here.depth += 1
        inherited[j] = here
      }
    }
    var out: [RawEntity] = []
    for (i, e) in entities.enumerated() {
      if e.isAbstract {
        if report {
          log.note(
            e.location, "abstract-entity",
            "\(e.name) is abstract: it has no records of its own, so it is not a type; its fields are copied into the entities that inherit from it.")
        }
        continue
      }
      let from: Inheritance
      if let memo = inherited[i] {
        from = memo
      } else {
        from = try walk(e, entities, byName: byName, total: &total, file: file)
      }
      if report, let name = from.missing {
        log.note(e.location, "unreadable-source", "The parent entity \(name) of \(e.name) is not in the model; nothing is inherited.")
      }
      var flat = e
      flat.uniqueness += from.uniqueness
      if !from.properties.isEmpty {
        if report {
          log.note(
            e.location, "inheritance-flattened",
            "\(e.name) inherits from \(e.parent ?? ""): the parent's fields are copied into it (CloudKit stores the whole hierarchy as one record type)."
          )
        }
        let own = Set(flat.properties.map(\.name))
        flat.properties = from.properties.filter { !own.contains($0.name) } + flat.properties
        if from.count > from.properties.count, report {
          log.warning(
            e.location, "too-many-fields",
            "\(e.name) inherits \(from.count) attributes and relationships from \(from.depth) parent entities; a scenario type holds at most 64 fields, so only the first \(Self.maximumInheritedRead) (the farthest parents' first) are read.",
            apple: "", fix: "make the hierarchy shallower, or split the model", about: ModelSubject(entity: e.name))
        }
      }
      out.append(flat)
    }
    return out
  }

  /// What an entity inherits: its ancestors' properties, the farthest first, their uniqueness
  /// constraints, the nearest first, how many parents it has, and the name of a parent missing
  /// from the model that ended the chain.
  struct Inheritance {
    /// The first ``maximumInheritedRead`` of them.
    var properties: [RawProperty] = []
    /// How many there are.
    var count = 0
    var uniqueness: [RawUniqueness] = []
    var depth = 0
    var missing: String?
  }

  /// The properties of `parent`, each marked as inherited from it (unless it already was).
  static func tagged(_ parent: RawEntity) -> [RawProperty] {
    parent.properties.map { q in
      var q = q
      if q.inheritedFrom == nil { q.inheritedFrom = parent.name }
      return q
    }
  }

  /// The inheritance of `e` by walking its chain of parents, stopping at a name already seen.
  func walk(_ e: RawEntity, _ entities: [RawEntity], byName: [String: Int], total: inout Int, file: String) throws(ImportError) -> Inheritance {
    var ancestors: [RawEntity] = []
    var seen: Set<String> = [e.name]
    var from = Inheritance()
    var parentName = e.parent
    while let name = parentName, !seen.contains(name) {
      seen.insert(name)
      guard let index = byName[name] else {
        from.missing = name
        break
      }
      let parent = entities[index]
      ancestors.append(parent)
      from.depth += 1
      total += max(1, parent.properties.count + parent.uniqueness.count)
      if total > Self.maximumInherited {
        throw tooMuchInheritance(e, properties: ancestors.reduce(0) { $0 + $1.properties.count }, depth: from.depth, file: file)
      }
      parentName = parent.parent
    }
    for parent in ancestors.reversed() {
      if from.properties.count < Self.maximumInheritedRead {
        from.properties += Self.tagged(parent).prefix(Self.maximumInheritedRead - from.properties.count)
      }
      from.count += parent.properties.count
    }
    for parent in ancestors { from.uniqueness += parent.uniqueness }
    return from
  }

  func tooMuchInheritance(_ e: RawEntity, properties: Int, depth: Int, file: String) -> ImportError {
    ImportError(
      reason: .tooLarge, path: file, location: e.location,
      message:
        "\(e.name) inherits \(properties) attributes and relationships from \(depth) parent entities, and the model's entities inherit more than \(Self.maximumInherited) fields and constraints in all: a schema that large is not a usable sync schema, so the model is not read (make the hierarchy shallower or split the model)"
    )
  }

  mutating func readEntity(_ element: XMLTag, report: Bool) -> RawEntity? {
    guard let name = element["name"], !name.isEmpty else {
      if report { log.note(element.location, "unreadable-source", "An <entity> without a name is ignored.") }
      return nil
    }
    var entity = RawEntity(name: name, location: element.location)
    entity.isAbstract = element["isAbstract"] == "YES"
    entity.parent = element["parentEntity"]
    for child in element.children {
      switch child.name {
      case "attribute":
        if let p = readAttribute(child, entity: name, report: report) { entity.properties.append(p) }
      case "relationship":
        if let p = readRelationship(child, entity: name, report: report) { entity.properties.append(p) }
      case "uniquenessConstraints":
        for constraint in child.children where constraint.name == "uniquenessConstraint" {
          let fields = constraint.children.filter { $0.name == "constraint" }.compactMap { $0["value"] }
          if !fields.isEmpty {
            entity.uniqueness.append(RawUniqueness(fields: fields, location: constraint.location, fromAttribute: false, entity: name))
          }
        }
      case "fetchIndex", "compoundIndexes":
        if report { log.note(child.location, "index-ignored", "The index <\(child.name)> of \(name) is ignored: indexes do not change what syncs.") }
      case "fetchedProperty":
        if report {
          log.note(child.location, "unreadable-source", "The fetched property \(child["name"] ?? "") of \(name) is not stored; it is ignored.")
        }
      case _ where Self.silentElements.contains(child.name):
        continue
      default:
        if report { log.note(child.location, "unreadable-source", "The element <\(child.name)> of entity \(name) is not understood; it is ignored.") }
      }
    }
    return entity
  }

  mutating func readAttribute(_ element: XMLTag, entity: String, report: Bool) -> RawProperty? {
    guard let name = element["name"], !name.isEmpty else {
      if report { log.note(element.location, "unreadable-source", "An <attribute> of \(entity) without a name is ignored.") }
      return nil
    }
    if element["transient"] == "YES" { return nil }
    if element["derived"] == "YES" {
      if report { log.note(element.location, "unreadable-source", "\(entity).\(name) is derived (computed by Core Data); it is not read.") }
      return nil
    }
    let type = element["attributeType"] ?? "Undefined"
    let kind: RawKind
    switch type {
    case _ where Self.stringTypes.contains(type): kind = .string
    case _ where Self.intTypes.contains(type): kind = .int
    case _ where Self.doubleTypes.contains(type):
      kind = .double
      if type == "Decimal" && report {
        log.note(
          element.location, "kind-approximated",
          "\(entity).\(name): Decimal is simulated as a double (a binary number of about 16 digits): decimals that differ only past that compare equal."
        )
      }
    case "Binary": kind = .bytes
    case "Boolean": kind = .bool
    case "Date": kind = .date
    default:
      kind = .opaque(type)
      if report {
        if Self.opaqueTypes.contains(type) {
          log.note(
            element.location, "opaque-type",
            "\(entity).\(name): \(type) has no scenario kind; simulated as an opaque value of kind string: only which write it came from matters.")
        } else {
          log.note(
            element.location, "unreadable-source",
            "\(entity).\(name) has the attribute type \"\(type)\", which is not understood; simulated as an opaque value of kind string.")
        }
      }
    }
    var p = RawProperty(name: name, location: element.location, typeText: type, kind: kind, optional: element["optional"] == "YES")
    p.originalName = element["elementID"].flatMap { $0 == name ? nil : $0 }
    // A Date attribute's default is a time interval since 2001 (`defaultDateTimeInterval`).
    if kind == .date, let interval = element["defaultDateTimeInterval"] {
      p.hasDefault = true
      p.defaultText = "\(interval)s after 2001-01-01"
    }
    if let value = element["defaultValueString"] {
      p.hasDefault = true
      switch kind {
      case .string:
        if value.unicodeScalars.allSatisfy({ $0.value >= 0x20 || $0 == "\n" }) {
          p.defaultLiteral = ScenarioText.quoted(value)
        } else {
          p.defaultText = ScenarioText.quoted(value)
        }
      case .int:
        if let v = Int64(value.trimmingSpaces()) { p.defaultLiteral = String(v) } else { p.defaultText = value }
      case .double:
        if let v = Double(value.trimmingSpaces()), v.isFinite { p.defaultLiteral = v.description } else { p.defaultText = value }
      case .bool:
        switch value.trimmingSpaces() {
        case "YES", "1", "true": p.defaultLiteral = "true"
        case "NO", "0", "false": p.defaultLiteral = "false"
        default: p.defaultText = value
        }
      default:
        p.defaultText = value
      }
    }
    return p
  }

  mutating func readRelationship(_ element: XMLTag, entity: String, report: Bool) -> RawProperty? {
    guard let name = element["name"], !name.isEmpty, let destination = element["destinationEntity"], !destination.isEmpty else {
      if report { log.note(element.location, "unreadable-source", "A <relationship> of \(entity) without a name or destination is ignored.") }
      return nil
    }
    if element["transient"] == "YES" { return nil }
    let toMany = element["toMany"] == "YES"
    let typeText = toMany ? "to-many \(destination)" : "to-one \(destination)"
    var p = RawProperty(
      name: name, location: element.location, typeText: typeText, kind: .relationship(destination, toMany: toMany),
      optional: element["optional"] == "YES")
    p.inverse = element["inverseName"]
    p.ordered = element["ordered"] == "YES"
    p.originalName = element["elementID"].flatMap { $0 == name ? nil : $0 }
    switch element["deletionRule"] ?? "Nullify" {
    case "Nullify": p.deleteRule = .nullify
    case "Cascade": p.deleteRule = .cascade
    case "Deny": p.deleteRule = .deny
    case "No Action": p.deleteRule = .noAction
    case let other:
      p.deleteRule = .nullify
      if report {
        log.note(element.location, "unreadable-source", "The deletion rule \"\(other)\" of \(entity).\(name) is not understood; read as Nullify.")
      }
    }
    return p
  }
}

extension String {
  /// The string without leading and trailing whitespace, in one pass forward (dropping the last
  /// character of a Substring again and again costs its length each time).
  func trimmingSpaces() -> String {
    guard let start = firstIndex(where: { !$0.isWhitespace }) else { return "" }
    var end = start
    var k = start
    while k < endIndex {
      let next = index(after: k)
      if !self[k].isWhitespace { end = next }
      k = next
    }
    return String(self[start..<end])
  }
}
