"use strict";
/*
 * The Node.js side of HoloDeck's TypeScript tools (started by
 * holodeck/tools/typescript/_process.py).
 *
 * One JSON object per line on stdin, one answer per line on stdout, matched by `id`, so
 * several calls can be in flight at once. Operations:
 *
 *   {"id", "op": "hello"}             -> {"node", "typescript"} or {"node", "typescript_error"}
 *   {"id", "op": "describe", "files": [{"file", "functions": [...]}]}
 *        -> {file: {"error"} | {"functions": {name: {"description", "parameters", "layout"}
 *                                                  | {"missing": reason}}}}
 *   {"id", "op": "call", "file", "function", "layout", "args", "params"} -> the return value
 *   {"id", "op": "ping"}                        -> "pong"
 *
 * Answers are {"id", "result"} or {"id", "error": {"name", "message", "stack"}}.
 * The process exits when stdin closes. Tool output (console.log and friends) goes to
 * stderr so that stdout carries the protocol only.
 *
 * `describe` reads the functions' types with the TypeScript compiler's type checker and
 * turns them into JSON schemas; `call` loads the files through `ts.transpileModule`
 * (CommonJS) and calls the function. The path of the `typescript` package comes in the
 * HOLODECK_TYPESCRIPT environment variable. Keep this file free of syntax newer than
 * ES2018 so that an old Node.js can still say which version it is.
 */

var fs = require("fs");
var Module = require("module");
var path = require("path");
var readline = require("readline");

// Node.js 22.1+ can keep compiled code between runs: the compiler then loads much faster.
if (typeof Module.enableCompileCache === "function") {
  try {
    Module.enableCompileCache();
  } catch (ignored) {
    // a cache is an optimisation only
  }
}

var protocolWrite = process.stdout.write.bind(process.stdout);
process.stdout.write = process.stderr.write.bind(process.stderr);

var tsModule = null;
function typescript() {
  if (tsModule === null) {
    var location = process.env.HOLODECK_TYPESCRIPT;
    if (!location) throw new Error("HOLODECK_TYPESCRIPT is not set");
    tsModule = require(location);
  }
  return tsModule;
}

// ---------------------------------------------------------------------------------------
// Loading .ts files

function compileTypeScript(module, filename) {
  var ts = typescript();
  var source = fs.readFileSync(filename, "utf8");
  var output = ts.transpileModule(source, {
    fileName: filename,
    reportDiagnostics: false,
    compilerOptions: {
      module: ts.ModuleKind.CommonJS,
      target: ts.ScriptTarget.ES2022,
      esModuleInterop: true,
      inlineSourceMap: true,
      inlineSources: false,
    },
  });
  module._compile(output.outputText, filename);
}

[".ts", ".cts", ".mts"].forEach(function (extension) {
  require.extensions[extension] = compileTypeScript;
});
if (typeof process.setSourceMapsEnabled === "function") process.setSourceMapsEnabled(true);

// ---------------------------------------------------------------------------------------
// Calling

function argumentsFor(layout, args, params) {
  if (!Array.isArray(layout)) return [args];
  var out = [];
  layout.forEach(function (slot) {
    if (slot.kind === "params") {
      out.push(params);
    } else if (slot.kind === "object") {
      out.push(args);
    } else if (slot.kind === "rest") {
      var rest = args[slot.name];
      if (Array.isArray(rest)) out.push.apply(out, rest);
      else if (rest !== undefined && rest !== null) out.push(rest);
    } else {
      var has = Object.prototype.hasOwnProperty.call(args, slot.name);
      var value = has ? args[slot.name] : undefined;
      // an optional parameter sent as null means "not given": let its default apply
      if (value === null && slot.optional) value = undefined;
      out.push(value);
    }
  });
  while (out.length > 0 && out[out.length - 1] === undefined) out.pop();
  return out;
}

function call(request) {
  var exported = require(request.file);
  var fn = exported[request.function];
  if (typeof fn !== "function") {
    throw new Error(request.file + " exports no function `" + request.function + "`");
  }
  var args = argumentsFor(request.layout, request.args || {}, request.params || {});
  return fn.apply(undefined, args);
}

// ---------------------------------------------------------------------------------------
// Describing: TypeScript types -> JSON schema

var PERMISSIVE = {};
var MAX_DEPTH = 12;

function describe(request) {
  var ts = typescript();
  var files = request.files.map(function (entry) {
    return entry.file;
  });
  var program = ts.createProgram(files, {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.CommonJS,
    moduleResolution: ts.ModuleResolutionKind.Node10,
    lib: ["lib.es2022.d.ts"],
    types: [],
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    esModuleInterop: true,
    allowJs: false,
  });
  var checker = program.getTypeChecker();
  var result = {};
  request.files.forEach(function (entry) {
    result[entry.file] = describeFile(ts, program, checker, entry);
  });
  return result;
}

function sourceFileOf(program, file) {
  var direct = program.getSourceFile(file);
  if (direct) return direct;
  var wanted = path.resolve(file);
  return program.getSourceFiles().find(function (sf) {
    return path.resolve(sf.fileName) === wanted;
  });
}

function describeFile(ts, program, checker, entry) {
  var sf = sourceFileOf(program, entry.file);
  if (!sf) return { error: "cannot read the file" };
  var syntax = program.getSyntacticDiagnostics(sf);
  if (syntax.length > 0) {
    var first = syntax[0];
    var where = first.start === undefined ? "" : "line " + (sf.getLineAndCharacterOfPosition(first.start).line + 1) + ": ";
    return { error: where + ts.flattenDiagnosticMessageText(first.messageText, "\n") };
  }
  var exported = new Map();
  var moduleSymbol = checker.getSymbolAtLocation(sf);
  if (moduleSymbol) {
    checker.getExportsOfModule(moduleSymbol).forEach(function (symbol) {
      exported.set(symbol.name, symbol);
    });
  }
  var functions = {};
  entry.functions.forEach(function (name) {
    var symbol = exported.get(name);
    if (!symbol) {
      functions[name] = { missing: "exports no function `" + name + "`" };
      return;
    }
    if (symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
    try {
      functions[name] = describeFunction(ts, program, checker, sf, symbol, name);
    } catch (err) {
      functions[name] = {
        description: null,
        parameters: { type: "object", additionalProperties: true },
        layout: null,
        warning: String(err && err.stack ? err.stack : err),
      };
    }
  });
  return { functions: functions };
}

function docText(ts, checker, symbol) {
  if (!symbol) return "";
  return ts
    .displayPartsToString(symbol.getDocumentationComment(checker))
    .replace(/^\s*-\s+/, "")
    .trim();
}

function parameterTags(ts, declaration) {
  // `@param name text` and `@param obj.name text` of the function's JSDoc, by name
  var tags = new Map();
  if (!declaration) return tags;
  ts.getJSDocTags(declaration).forEach(function (tag) {
    if (!ts.isJSDocParameterTag(tag)) return;
    var text = (ts.getTextOfJSDocComment(tag.comment) || "").replace(/^\s*-\s*/, "").trim();
    if (!text) return;
    var full = tag.name.getText();
    tags.set(full, text);
    var dot = full.lastIndexOf(".");
    if (dot >= 0 && !tags.has(full.slice(dot + 1))) tags.set(full.slice(dot + 1), text);
  });
  return tags;
}

function describeFunction(ts, program, checker, sf, symbol, name) {
  var declaration = symbol.valueDeclaration || (symbol.declarations || [])[0];
  var type = checker.getTypeOfSymbolAtLocation(symbol, declaration || sf);
  var signatures = type.getCallSignatures();
  if (signatures.length === 0) return { missing: "`" + name + "` is not a function" };
  var signature = signatures[0];
  var description = ts.displayPartsToString(signature.getDocumentationComment(checker)).trim() || docText(ts, checker, symbol);
  var tags = parameterTags(ts, signature.getDeclaration());
  var ctx = { ts: ts, program: program, checker: checker, node: sf };

  var parameters = signature.getParameters();
  var visible = parameters.filter(function (p) {
    return !isParamsParameter(ts, p);
  });
  var properties = {};
  var required = [];
  var layout = [];
  var closed = true;

  parameters.forEach(function (parameter, index) {
    var decl = parameter.valueDeclaration;
    if (isParamsParameter(ts, parameter)) {
      layout.push({ kind: "params" });
      return;
    }
    var parameterType = checker.getTypeOfSymbolAtLocation(parameter, decl || sf);
    var optional = decl && ts.isParameter(decl) ? checker.isOptionalParameter(decl) : false;
    var rest = !!(decl && decl.dotDotDotToken);
    if (decl && ts.isObjectBindingPattern(decl.name) && visible.length === 1) {
      // f({a, b}: {a: string; b?: number}): the object's properties are the tool's parameters
      var object = objectSchema(ctx, parameterType, [], 0, tags);
      var defaults = new Set();
      decl.name.elements.forEach(function (element) {
        var key = element.propertyName || element.name;
        if (element.initializer && ts.isIdentifier(key)) defaults.add(key.text);
      });
      Object.keys(object.properties || {}).forEach(function (key) {
        properties[key] = object.properties[key];
      });
      (object.required || []).forEach(function (key) {
        if (!optional && !defaults.has(key)) required.push(key);
      });
      if (object.additionalProperties !== false) closed = false;
      layout.push({ kind: "object" });
      return;
    }
    var key = decl && ts.isIdentifier(decl.name) ? decl.name.text : "arg" + index;
    var schema;
    if (rest) {
      schema = restSchema(ctx, parameterType);
    } else {
      schema = safeSchema(ctx, parameterType, [], 0);
    }
    var text = docText(ts, checker, parameter) || tags.get(key) || "";
    if (text) schema = withDescription(schema, text);
    properties[key] = schema;
    if (!optional && !rest) required.push(key);
    layout.push(rest ? { kind: "rest", name: key } : { kind: "named", name: key, optional: optional });
  });

  var schema = { type: "object", properties: properties };
  if (required.length > 0) schema.required = required;
  if (closed) schema.additionalProperties = false;
  return { description: description || null, parameters: schema, layout: layout };
}

function isParamsParameter(ts, parameter) {
  var decl = parameter.valueDeclaration;
  return !!(decl && ts.isParameter(decl) && ts.isIdentifier(decl.name) && decl.name.text === "params");
}

function withDescription(schema, text) {
  var copy = Object.assign({}, schema);
  copy.description = text;
  return copy;
}

function restSchema(ctx, type) {
  if (isArray(ctx, type)) return safeSchema(ctx, type, [], 0);
  return { type: "array", items: safeSchema(ctx, type, [], 0) };
}

function safeSchema(ctx, type, stack, depth) {
  try {
    return toSchema(ctx, type, stack, depth);
  } catch (err) {
    return PERMISSIVE;
  }
}

function isArray(ctx, type) {
  var checker = ctx.checker;
  if (typeof checker.isArrayType === "function") return checker.isArrayType(type);
  var symbol = type.getSymbol();
  return !!(symbol && (symbol.name === "Array" || symbol.name === "ReadonlyArray") && type.typeArguments);
}

function isTuple(ctx, type) {
  var checker = ctx.checker;
  if (typeof checker.isTupleType === "function") return checker.isTupleType(type);
  return !!(type.target && type.target.objectFlags & ctx.ts.ObjectFlags.Tuple);
}

function fromDefaultLibrary(ctx, symbol) {
  var declarations = (symbol && symbol.declarations) || [];
  return (
    declarations.length > 0 &&
    declarations.every(function (d) {
      return ctx.program.isSourceFileDefaultLibrary(d.getSourceFile());
    })
  );
}

function toSchema(ctx, type, stack, depth) {
  var ts = ctx.ts;
  var checker = ctx.checker;
  var F = ts.TypeFlags;
  var flags = type.flags;
  if (depth > MAX_DEPTH || stack.indexOf(type) >= 0) return PERMISSIVE;
  if (flags & (F.Any | F.Unknown | F.Never | F.ESSymbolLike)) return PERMISSIVE;
  if (flags & F.StringLiteral) return { type: "string", enum: [type.value] };
  if (flags & (F.String | F.TemplateLiteral | F.StringMapping)) return { type: "string" };
  if (flags & F.NumberLiteral) return { type: "number", enum: [type.value] };
  if (flags & F.Number) return { type: "number" };
  if (flags & (F.BigInt | F.BigIntLiteral)) return { type: "integer" };
  if (flags & F.BooleanLiteral) return { type: "boolean", enum: [type.intrinsicName === "true"] };
  if (flags & F.Boolean) return { type: "boolean" };
  if (flags & F.Null) return { type: "null" };
  if (flags & (F.Undefined | F.Void)) return PERMISSIVE;
  if (flags & F.NonPrimitive) return { type: "object" };
  if (type.isUnion()) return unionSchema(ctx, type, stack, depth);
  if (flags & F.TypeParameter) {
    var constraint = checker.getBaseConstraintOfType(type);
    return constraint && constraint !== type ? toSchema(ctx, constraint, stack, depth + 1) : PERMISSIVE;
  }
  var inner = stack.concat([type]);
  if (isArray(ctx, type)) {
    var element = checker.getTypeArguments(type)[0];
    return { type: "array", items: element ? toSchema(ctx, element, inner, depth + 1) : PERMISSIVE };
  }
  if (isTuple(ctx, type)) {
    var elements = checker.getTypeArguments(type).map(function (t) {
      return toSchema(ctx, t, inner, depth + 1);
    });
    var tuple = { type: "array" };
    if (elements.length > 0) tuple.items = elements.length === 1 ? elements[0] : { anyOf: unique(elements) };
    var fixed = type.target && type.target.fixedLength;
    if (typeof fixed === "number" && !(type.target.hasRestElement)) {
      tuple.minItems = type.target.minLength;
      tuple.maxItems = fixed;
    }
    return tuple;
  }
  if (flags & (F.Object | F.Intersection)) {
    var symbol = type.getSymbol() || type.aliasSymbol;
    if (type.getCallSignatures().length > 0 || type.getConstructSignatures().length > 0) return PERMISSIVE;
    if (symbol && symbol.name === "Date" && fromDefaultLibrary(ctx, symbol)) {
      return { type: "string", format: "date-time" };
    }
    if (symbol && symbol.flags & (ts.SymbolFlags.Class | ts.SymbolFlags.Interface) && fromDefaultLibrary(ctx, symbol)) {
      return PERMISSIVE; // Map, Set, RegExp, Promise...: nothing JSON can carry as they are
    }
    return objectSchema(ctx, type, inner, depth + 1, null);
  }
  return PERMISSIVE;
}

function objectSchema(ctx, type, stack, depth, tags) {
  var ts = ctx.ts;
  var checker = ctx.checker;
  var properties = {};
  var required = [];
  checker.getPropertiesOfType(type).forEach(function (property) {
    var declaration = property.valueDeclaration || (property.declarations || [])[0];
    var propertyType = checker.getTypeOfSymbolAtLocation(property, declaration || ctx.node);
    if (property.flags & ts.SymbolFlags.Method) return;
    if (propertyType.getCallSignatures().length > 0 && !propertyType.isUnion()) return;
    var schema = safeSchema(ctx, propertyType, stack, depth);
    var text = docText(ts, checker, property) || (tags && tags.get(property.name)) || "";
    if (text) schema = withDescription(schema, text);
    properties[property.name] = schema;
    if (!(property.flags & ts.SymbolFlags.Optional)) required.push(property.name);
  });
  var schema = { type: "object", properties: properties };
  if (required.length > 0) schema.required = required;
  var index = stringIndex(ctx, type);
  if (index) schema.additionalProperties = safeSchema(ctx, index, stack, depth);
  else schema.additionalProperties = false;
  return schema;
}

function stringIndex(ctx, type) {
  var checker = ctx.checker;
  var infos = typeof checker.getIndexInfosOfType === "function" ? checker.getIndexInfosOfType(type) : [];
  for (var i = 0; i < infos.length; i++) {
    if (infos[i].keyType.flags & ctx.ts.TypeFlags.String) return infos[i].type;
  }
  return null;
}

function unionSchema(ctx, type, stack, depth) {
  var F = ctx.ts.TypeFlags;
  var members = type.types.filter(function (t) {
    return !(t.flags & (F.Undefined | F.Void));
  });
  var strings = [];
  var numbers = [];
  var booleans = new Set();
  var nullable = false;
  var others = [];
  members.forEach(function (member) {
    if (member.flags & F.StringLiteral) strings.push(member.value);
    else if (member.flags & F.NumberLiteral) numbers.push(member.value);
    else if (member.flags & F.BooleanLiteral) booleans.add(member.intrinsicName === "true");
    else if (member.flags & F.Null) nullable = true;
    else others.push(member);
  });
  var schemas = others.map(function (member) {
    return safeSchema(ctx, member, stack, depth + 1);
  });
  var plain = function (name) {
    return schemas.some(function (s) {
      return s.type === name && !s.enum;
    });
  };
  if (strings.length > 0 && !plain("string")) schemas.push({ type: "string", enum: strings });
  if (numbers.length > 0 && !plain("number")) schemas.push({ type: "number", enum: numbers });
  if (booleans.size === 2 && !plain("boolean")) schemas.push({ type: "boolean" });
  else if (booleans.size === 1 && !plain("boolean")) schemas.push({ type: "boolean", enum: Array.from(booleans) });
  if (nullable) schemas.push({ type: "null" });
  schemas = unique(schemas);
  if (schemas.some(function (s) { return Object.keys(s).length === 0; })) return PERMISSIVE;
  if (schemas.length === 0) return PERMISSIVE;
  if (schemas.length === 1) return schemas[0];
  return { anyOf: schemas };
}

function unique(schemas) {
  var seen = new Set();
  return schemas.filter(function (schema) {
    var key = JSON.stringify(schema);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

// ---------------------------------------------------------------------------------------
// The protocol

function replacer(key, value) {
  if (typeof value === "bigint") return value.toString();
  if (value instanceof Map) return Object.fromEntries(value);
  if (value instanceof Set) return Array.from(value);
  return value;
}

function send(message) {
  var line;
  try {
    line = JSON.stringify(message, replacer);
  } catch (err) {
    line = JSON.stringify({
      id: message.id,
      error: { name: "TypeError", message: "the result cannot be turned into JSON: " + err.message },
    });
  }
  protocolWrite(line + "\n");
}

function errorOf(err) {
  if (err instanceof Error) {
    return { name: err.name || "Error", message: err.message, stack: err.stack || "" };
  }
  var text;
  try {
    text = typeof err === "string" ? err : JSON.stringify(err);
  } catch (ignored) {
    text = String(err);
  }
  return { name: "Error", message: text === undefined ? String(err) : text, stack: "" };
}

function hello() {
  var answer = { node: process.versions.node };
  try {
    answer.typescript = typescript().version;
  } catch (err) {
    answer.typescript_error = String(err && err.message ? err.message : err);
  }
  return answer;
}

function handle(request) {
  var id = request.id;
  new Promise(function (resolve) {
    switch (request.op) {
      case "hello":
        resolve(hello());
        break;
      case "ping":
        resolve("pong");
        break;
      case "describe":
        resolve(describe(request));
        break;
      case "call":
        resolve(call(request));
        break;
      default:
        throw new Error("unknown operation " + JSON.stringify(request.op));
    }
  }).then(
    function (result) {
      send({ id: id, result: result === undefined ? null : result });
    },
    function (err) {
      send({ id: id, error: errorOf(err) });
    }
  );
}

process.on("uncaughtException", function (err) {
  process.stderr.write("uncaught exception in a TypeScript tool: " + (err && err.stack ? err.stack : err) + "\n");
});
process.on("unhandledRejection", function (reason) {
  process.stderr.write("unhandled rejection in a TypeScript tool: " + (reason && reason.stack ? reason.stack : reason) + "\n");
});

var lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
lines.on("line", function (line) {
  if (!line.trim()) return;
  var request;
  try {
    request = JSON.parse(line);
  } catch (err) {
    var id = /"id":\s*(\d+)/.exec(line);
    if (id) send({ id: Number(id[1]), error: { name: "SyntaxError", message: "unreadable request: " + err.message } });
    else process.stderr.write("unreadable request: " + line.slice(0, 200) + "\n");
    return;
  }
  handle(request);
});
lines.on("close", function () {
  process.exit(0);
});
