// `mcpgen diff --api`: the exported TypeScript surface of two generated packages, read with ts-morph and compared.
import { existsSync, readdirSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { Node, Project, SyntaxKind } from "ts-morph";
import { SchemaError } from "../errors.js";
import { compareCodeUnits } from "../json.js";
import { compareChanges } from "./diff.js";
import { summarize } from "./summary.js";
import type { Change, DiffReport, Verdict } from "./types.js";

/** One member of an exported interface, type literal, class or object constant. */
interface ApiMember {
  optional: boolean;
  /** Normalized type or signature text. */
  text: string;
  where: string;
  /** Methods: parameters and return type, compared one by one. */
  params?: ApiParam[];
  ret?: string;
}

interface ApiParam {
  name: string;
  optional: boolean;
  text: string;
}

interface ApiExport {
  kind: "interface" | "type" | "function" | "class" | "const" | "enum";
  where: string;
  /** For type aliases that are neither object literals nor unions, and for functions' return types. */
  text?: string;
  members?: Map<string, ApiMember>;
  /** Union type aliases: their member texts. */
  union?: string[];
  params?: ApiParam[];
  /** "client" for the Client class, "server" for the Server class, else shared. */
  audience: "client" | "server" | "both";
}

const squash = (s: string): string => s.replace(/\s+/g, " ").replace(/;\s*}/g, " }").trim();

function where(dir: string, node: Node): string {
  // The compiler's cached line map: ts-morph's getStartLineNumber rescans the text each time, slow on validators.ts.
  const source = node.getSourceFile();
  const line = source.compilerNode.getLineAndCharacterOfPosition(node.getStart()).line + 1;
  return `${basename(source.getFilePath())}:${line}`;
}

function paramsOf(node: Node): ApiParam[] {
  if (
    !Node.isFunctionDeclaration(node) &&
    !Node.isMethodDeclaration(node) &&
    !Node.isConstructorDeclaration(node) &&
    !Node.isMethodSignature(node)
  )
    return [];
  return node.getParameters().map((p) => ({
    name: p.getName(),
    optional: p.hasQuestionToken() || p.hasInitializer() || p.isRestParameter(),
    text: squash(p.getTypeNode()?.getText() ?? "unknown"),
  }));
}

function signature(node: Node): string {
  const params = paramsOf(node)
    .map((p) => `${p.name}${p.optional ? "?" : ""}: ${p.text}`)
    .join(", ");
  const ret =
    Node.isFunctionDeclaration(node) || Node.isMethodDeclaration(node) || Node.isMethodSignature(node)
      ? squash(node.getReturnTypeNode()?.getText() ?? "void")
      : "";
  return `(${params})${ret ? `: ${ret}` : ""}`;
}

function returnText(node: Node): string {
  return Node.isMethodDeclaration(node) || Node.isMethodSignature(node) || Node.isFunctionDeclaration(node)
    ? squash(node.getReturnTypeNode()?.getText() ?? "void")
    : "";
}

function typeMembers(dir: string, node: Node): Map<string, ApiMember> {
  const out = new Map<string, ApiMember>();
  const members = Node.isInterfaceDeclaration(node) || Node.isTypeLiteral(node) ? node.getMembers() : [];
  for (const m of members) {
    if (Node.isPropertySignature(m))
      out.set(m.getName(), {
        optional: m.hasQuestionToken(),
        text: squash(m.getTypeNode()?.getText() ?? "unknown"),
        where: where(dir, m),
      });
    else if (Node.isMethodSignature(m))
      out.set(`${m.getName()}()`, {
        optional: m.hasQuestionToken(),
        text: signature(m),
        where: where(dir, m),
        params: paramsOf(m),
        ret: returnText(m),
      });
    else if (Node.isIndexSignatureDeclaration(m))
      out.set(`[${m.getKeyName()}: ${m.getKeyTypeNode().getText()}]`, {
        optional: true,
        text: squash(m.getReturnTypeNode()?.getText() ?? "unknown"),
        where: where(dir, m),
      });
  }
  return out;
}

function describe(dir: string, name: string, node: Node): ApiExport | undefined {
  const at = where(dir, node);
  if (Node.isInterfaceDeclaration(node)) {
    const ext = node.getExtends().map((e) => squash(e.getText()));
    const members = typeMembers(dir, node);
    if (ext.length) members.set("extends", { optional: false, text: ext.sort(compareCodeUnits).join(", "), where: at });
    return { kind: "interface", where: at, members, audience: "both" };
  }
  if (Node.isTypeAliasDeclaration(node)) {
    let type = node.getTypeNode();
    while (type && Node.isParenthesizedTypeNode(type)) type = type.getTypeNode();
    if (type && Node.isTypeLiteral(type))
      return { kind: "type", where: at, members: typeMembers(dir, type), audience: "both" };
    if (type && Node.isUnionTypeNode(type))
      return {
        kind: "type",
        where: at,
        union: type
          .getTypeNodes()
          .map((t) => squash(t.getText()))
          .sort(compareCodeUnits),
        audience: "both",
      };
    return {
      kind: "type",
      where: at,
      text: squash(
        `${node
          .getTypeParameters()
          .map((p) => p.getText())
          .join(", ")} ${type?.getText() ?? ""}`,
      ),
      audience: "both",
    };
  }
  if (Node.isFunctionDeclaration(node))
    return {
      kind: "function",
      where: at,
      params: paramsOf(node),
      text: squash(node.getReturnTypeNode()?.getText() ?? "void"),
      audience: "both",
    };
  if (Node.isClassDeclaration(node)) {
    const members = new Map<string, ApiMember>();
    for (const c of node.getConstructors())
      members.set("constructor", {
        optional: false,
        text: signature(c),
        where: where(dir, c),
        params: paramsOf(c),
        ret: "",
      });
    for (const m of node.getMethods()) {
      if (m.hasModifier(SyntaxKind.PrivateKeyword) || m.hasModifier(SyntaxKind.ProtectedKeyword)) continue;
      members.set(`${m.isStatic() ? "static " : ""}${m.getName()}()`, {
        optional: m.hasQuestionToken(),
        text: signature(m),
        where: where(dir, m),
        params: paramsOf(m),
        ret: returnText(m),
      });
    }
    for (const p of node.getProperties()) {
      if (p.hasModifier(SyntaxKind.PrivateKeyword) || p.hasModifier(SyntaxKind.ProtectedKeyword)) continue;
      members.set(`${p.isStatic() ? "static " : ""}${p.getName()}`, {
        optional: p.hasQuestionToken(),
        text: squash(p.getTypeNode()?.getText() ?? "inferred"),
        where: where(dir, p),
      });
    }
    for (const p of node.getConstructors().flatMap((c) => c.getParameters())) {
      if (p.isParameterProperty() && !p.hasModifier(SyntaxKind.PrivateKeyword))
        members.set(p.getName(), {
          optional: p.hasQuestionToken(),
          text: squash(p.getTypeNode()?.getText() ?? "unknown"),
          where: where(dir, p),
        });
    }
    return {
      kind: "class",
      where: at,
      members,
      audience: name === "Client" ? "client" : name === "Server" ? "server" : "both",
    };
  }
  if (Node.isVariableDeclaration(node)) {
    const init = node.getInitializer();
    const members = new Map<string, ApiMember>();
    if (init && Node.isObjectLiteralExpression(init)) {
      for (const p of init.getProperties())
        if (Node.isPropertyAssignment(p) || Node.isShorthandPropertyAssignment(p))
          members.set(p.getName(), { optional: false, text: "", where: where(dir, p) });
    }
    // The initializer of a validator constant names an internal function whose number moves between runs: not API.
    return {
      kind: "const",
      where: at,
      text: squash(node.getTypeNode()?.getText() ?? ""),
      ...(members.size ? { members } : {}),
      audience: "both",
    };
  }
  if (Node.isEnumDeclaration(node))
    return {
      kind: "enum",
      where: at,
      members: new Map(
        node
          .getMembers()
          .map((m) => [
            m.getName(),
            { optional: false, text: squash(m.getInitializer()?.getText() ?? ""), where: where(dir, m) },
          ]),
      ),
      audience: "both",
    };
  return undefined;
}

/** Declarations a file exports under each name, found syntactically: no type checker, so no lib files to load. */
function exportsOf(project: Project, file: string, seen: Set<string>): Map<string, Node> {
  const out = new Map<string, Node>();
  if (seen.has(file) || !existsSync(file)) return out;
  seen.add(file);
  const source = project.getSourceFile(file) ?? project.addSourceFileAtPath(file);
  const target = (spec: string): string => resolve(source.getDirectoryPath(), spec.replace(/\.js$/, ".ts"));
  for (const statement of source.getStatements()) {
    if (Node.isExportDeclaration(statement)) {
      const spec = statement.getModuleSpecifierValue();
      if (spec === undefined || !spec.startsWith(".")) continue;
      const inner = exportsOf(project, target(spec), seen);
      if (!statement.hasNamedExports()) {
        for (const [name, node] of inner) if (!out.has(name)) out.set(name, node);
        continue;
      }
      for (const named of statement.getNamedExports()) {
        const node = inner.get(named.getName());
        if (node) out.set(named.getAliasNode()?.getText() ?? named.getName(), node);
      }
      continue;
    }
    if (!Node.isExportable(statement) || !statement.isExported()) continue;
    if (Node.isVariableStatement(statement)) {
      for (const d of statement.getDeclarations()) out.set(d.getName(), d);
    } else if (
      Node.isInterfaceDeclaration(statement) ||
      Node.isTypeAliasDeclaration(statement) ||
      Node.isFunctionDeclaration(statement) ||
      Node.isClassDeclaration(statement) ||
      Node.isEnumDeclaration(statement)
    ) {
      const name = statement.getName();
      // Overloads: the first declaration stands for the name.
      if (name !== undefined && !out.has(name)) out.set(name, statement);
    }
  }
  seen.delete(file);
  return out;
}

/** The exports of a generated package: its index.ts when it has one, else every .ts file in the folder. */
export function readApi(
  dir: string,
  project = new Project({ skipAddingFilesFromTsConfig: true, skipFileDependencyResolution: true }),
): Map<string, ApiExport> {
  const root = resolve(dir);
  if (!existsSync(root)) throw new SchemaError(dir, "no such directory");
  const files = readdirSync(root).filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"));
  if (files.length === 0) throw new SchemaError(dir, "no .ts files: not a generated package");
  const entries = files.includes("index.ts") ? ["index.ts"] : files;
  const out = new Map<string, ApiExport>();
  for (const entry of entries) {
    for (const [name, decl] of exportsOf(project, join(root, entry), new Set())) {
      const described = describe(dir, name, decl);
      if (described && !out.has(name)) out.set(name, described);
    }
  }
  return out;
}

interface Emit {
  (
    subject: string,
    part: string,
    path: string,
    kind: string,
    verdict: Verdict,
    reason: string,
    oldAt: string | null,
    newAt: string | null,
    audience: ApiExport["audience"],
  ): void;
}

function compareParams(
  emit: Emit,
  name: string,
  member: string,
  o: ApiParam[],
  n: ApiParam[],
  oldAt: string,
  newAt: string,
  audience: ApiExport["audience"],
): void {
  const label = member ? `${name}.${member}` : name;
  for (let i = 0; i < Math.max(o.length, n.length); i++) {
    const op = o[i];
    const np = n[i];
    if (op && !np)
      emit(
        name,
        "signature",
        member,
        "param-removed",
        "breaking",
        `${label}: parameter ${op.name} removed: callers that pass it no longer compile`,
        oldAt,
        newAt,
        audience,
      );
    else if (!op && np)
      emit(
        name,
        "signature",
        member,
        np.optional ? "param-added-optional" : "param-added-required",
        np.optional ? "compatible" : "breaking",
        np.optional
          ? `${label}: optional parameter ${np.name} added: existing calls still compile`
          : `${label}: required parameter ${np.name} added: existing calls no longer compile`,
        oldAt,
        newAt,
        audience,
      );
    else if (op && np) {
      if (op.optional && !np.optional)
        emit(
          name,
          "signature",
          member,
          "param-made-required",
          "breaking",
          `${label}: parameter ${np.name} made required: calls that leave it out no longer compile`,
          oldAt,
          newAt,
          audience,
        );
      if (!op.optional && np.optional)
        emit(
          name,
          "signature",
          member,
          "param-made-optional",
          "compatible",
          `${label}: parameter ${np.name} made optional: existing calls still compile`,
          oldAt,
          newAt,
          audience,
        );
      if (op.text !== np.text)
        emit(
          name,
          "signature",
          member,
          "param-type-changed",
          "breaking",
          `${label}: parameter ${np.name} type ${op.text} -> ${np.text}`,
          oldAt,
          newAt,
          audience,
        );
    }
  }
}

/** Compares the exported API of two generated packages; a change breaks the apps (client, server or both) that use the symbol. */
export function diffApi(oldDir: string, newDir: string): DiffReport {
  const project = new Project({ skipAddingFilesFromTsConfig: true, skipFileDependencyResolution: true });
  const olds = readApi(oldDir, project);
  const news = readApi(newDir, project);
  const out: Change[] = [];
  const emit: Emit = (subject, part, path, kind, verdict, reason, oldAt, newAt, audience) => {
    const clients: Verdict = verdict === "breaking" && audience !== "server" ? "breaking" : "compatible";
    const servers: Verdict = verdict === "breaking" && audience !== "client" ? "breaking" : "compatible";
    out.push({
      section: "api",
      subject,
      part,
      path,
      kind,
      effect: verdict === "breaking" ? "changed" : "none",
      clients,
      servers,
      reason,
      old: oldAt,
      new: newAt,
    });
  };
  const names = [...new Set([...olds.keys(), ...news.keys()])].sort(compareCodeUnits);
  for (const name of names) {
    const o = olds.get(name);
    const n = news.get(name);
    if (!n) {
      emit(
        name,
        "export",
        "",
        "export-removed",
        "breaking",
        `${o!.kind} ${name} removed: imports of it no longer compile`,
        o!.where,
        null,
        o!.audience,
      );
      continue;
    }
    if (!o) {
      emit(name, "export", "", "export-added", "compatible", `${n.kind} ${name} added`, null, n.where, n.audience);
      continue;
    }
    const audience = n.audience;
    if (o.kind !== n.kind) {
      emit(
        name,
        "export",
        "",
        "export-kind-changed",
        "breaking",
        `${name} changed from ${o.kind} to ${n.kind}`,
        o.where,
        n.where,
        audience,
      );
      continue;
    }
    if (o.union || n.union) {
      const os = new Set(o.union ?? [o.text ?? ""]);
      const ns = new Set(n.union ?? [n.text ?? ""]);
      for (const m of [...os].filter((x) => !ns.has(x)))
        emit(
          name,
          "type",
          m,
          "union-member-removed",
          "breaking",
          `${m} removed from type ${name}: code that builds or names it no longer compiles`,
          o.where,
          n.where,
          audience,
        );
      for (const m of [...ns].filter((x) => !os.has(x)))
        emit(
          name,
          "type",
          m,
          "union-member-added",
          "compatible",
          `${m} added to type ${name}: existing values still type-check (exhaustive switches need a case)`,
          o.where,
          n.where,
          audience,
        );
    } else if (o.kind !== "const" && o.text !== n.text && !(o.params && n.params)) {
      emit(
        name,
        "type",
        "",
        "type-changed",
        "breaking",
        `type ${name} changed: ${o.text} -> ${n.text}`,
        o.where,
        n.where,
        audience,
      );
    }
    if (o.params && n.params) {
      compareParams(emit, name, "", o.params, n.params, o.where, n.where, audience);
      if (o.text !== n.text)
        emit(
          name,
          "signature",
          "",
          "return-type-changed",
          "breaking",
          `${name}: return type ${o.text} -> ${n.text}`,
          o.where,
          n.where,
          audience,
        );
    }
    const om = o.members ?? new Map<string, ApiMember>();
    const nm = n.members ?? new Map<string, ApiMember>();
    const memberNames = [...new Set([...om.keys(), ...nm.keys()])].sort(compareCodeUnits);
    for (const m of memberNames) {
      const a = om.get(m);
      const b = nm.get(m);
      if (a && !b)
        emit(
          name,
          "member",
          m,
          "member-removed",
          "breaking",
          `${name}.${m} removed: code that uses it no longer compiles`,
          a.where,
          n.where,
          audience,
        );
      else if (!a && b) {
        const required = !b.optional && (n.kind === "interface" || n.kind === "type");
        emit(
          name,
          "member",
          m,
          required ? "member-added-required" : "member-added",
          required ? "breaking" : "compatible",
          required
            ? `required member ${name}.${m} added: object literals the app builds lack it`
            : `${name}.${m} added`,
          o.where,
          b.where,
          audience,
        );
      } else if (a && b) {
        if (!a.optional && b.optional)
          emit(
            name,
            "member",
            m,
            "member-made-optional",
            "breaking",
            `${name}.${m} made optional: code that reads it must now handle undefined`,
            a.where,
            b.where,
            audience,
          );
        if (a.optional && !b.optional)
          emit(
            name,
            "member",
            m,
            "member-made-required",
            "breaking",
            `${name}.${m} made required: object literals without it no longer compile`,
            a.where,
            b.where,
            audience,
          );
        if (a.params && b.params) {
          compareParams(emit, name, m, a.params, b.params, a.where, b.where, audience);
          if (a.ret !== b.ret)
            emit(
              name,
              "signature",
              m,
              "return-type-changed",
              "breaking",
              `${name}.${m}: return type ${a.ret} -> ${b.ret}`,
              a.where,
              b.where,
              audience,
            );
        } else if (a.text !== b.text)
          emit(
            name,
            "member",
            m,
            "member-type-changed",
            "breaking",
            `${name}.${m}: ${a.text || "value"} -> ${b.text || "value"}`,
            a.where,
            b.where,
            audience,
          );
      }
    }
  }
  const changes = out.sort(compareChanges);
  return {
    format: "mcpgen-diff/2",
    old: { file: oldDir },
    new: { file: newDir },
    notes: [
      "API diff: exported names, signatures, members and optionality of each package's index.ts, read syntactically with ts-morph",
    ],
    // Each export is one place; the summary ranks by sides broken.
    summary: summarize(changes, 1),
    changes,
  };
}
