#!/usr/bin/node
// graph-tsserver.js: call edges of a TypeScript/JavaScript repository according
// to the TypeScript language service (what tsserver answers to "go to definition").
//
// Usage: node graph-tsserver.js <repo>     (the `typescript` npm package must be
// resolvable: NODE_PATH=<dir>/node_modules, see bench/README.md)
//
// Every tracked .ts .tsx .mts .cts .js .jsx .mjs .cjs file (not .d.ts) is one
// root of one program (allowJs, the repository's tsconfig.json compilerOptions
// when there is one, for its paths).  For every call f(...), o.f(...) and
// new C(...), getDefinitionAtPosition on the callee's name; each definition
// that is a function or method with a body, a class, or a variable or
// property whose value is a function or arrow function, in a tracked file,
// gives one line {"path":..,"line":..,"def_path":..,"def_line":..}: the
// call's file and the line of the callee's name, the definition's file and
// the line its declaration starts on (where ci's tags put a definition).  An
// overload signature the call resolves to (a function's or a class method's)
// stands for its implementation; a signature of an interface or a type, an
// abstract method or a `declare function` is no definition.  Sorted, unique.
// A call line where the service finds no definition in the repository because
// the callee comes from a repository file that is not there (a relative import
// of a build output such as `../dist/index.js` that no tracked file provides,
// directly or through a variable initialised from it: `const c = new LRU()`)
// gives {"path":..,"skip_from":line,"skip_to":line}: the service cannot judge
// it, and bench/graph.sh leaves ci's edges from that line out (and counts them).
// Used by bench/graph.sh as the reference for ci-refs callers on TS/JS.
'use strict';
const fs = require('fs');
const path = require('path');
const { execFileSync } = require('child_process');
const ts = require('typescript');

const root = path.resolve(process.argv[2] || '.');
const files = execFileSync('git', ['-C', root, 'ls-files', '*.ts', '*.tsx', '*.mts', '*.cts', '*.js', '*.jsx',
	'*.mjs', '*.cjs'], { encoding: 'utf8', maxBuffer: 1 << 28 })
	.split('\n').filter((f) => f && !f.endsWith('.d.ts') && !f.includes('node_modules/'));
const fileset = new Set(files);
const abs = (f) => path.join(root, f);

let options = {};
const tsconfig = path.join(root, 'tsconfig.json');
if (fs.existsSync(tsconfig)) {
	const cf = ts.readConfigFile(tsconfig, ts.sys.readFile);
	if (!cf.error)
		options = ts.parseJsonConfigFileContent(cf.config, ts.sys, root).options;
}
Object.assign(options, {
	allowJs: true, checkJs: false, noEmit: true, skipLibCheck: true, jsx: ts.JsxEmit.Preserve,
	esModuleInterop: true, allowSyntheticDefaultImports: true,
	moduleResolution: options.moduleResolution || ts.ModuleResolutionKind.Bundler,
	module: options.module || ts.ModuleKind.ESNext, target: options.target || ts.ScriptTarget.ESNext,
});
delete options.noLib;

const texts = new Map();
const read = (p) => {
	if (!texts.has(p))
		texts.set(p, ts.sys.readFile(p));
	return texts.get(p);
};
const host = {
	getScriptFileNames: () => files.map(abs),
	getScriptVersion: () => '1',
	getScriptSnapshot: (p) => {
		const t = read(p);
		return t === undefined ? undefined : ts.ScriptSnapshot.fromString(t);
	},
	getCurrentDirectory: () => root,
	getCompilationSettings: () => options,
	getDefaultLibFileName: (o) => ts.getDefaultLibFilePath(o),
	fileExists: ts.sys.fileExists,
	readFile: read,
	readDirectory: ts.sys.readDirectory,
	directoryExists: ts.sys.directoryExists,
	getDirectories: ts.sys.getDirectories,
};
const service = ts.createLanguageService(host, ts.createDocumentRegistry());
const program = service.getProgram();

// the innermost node of sf that starts at pos and is an identifier
function nodeAt(sf, pos) {
	let found;
	const visit = (n) => {
		if (pos < n.getFullStart() || pos >= n.getEnd())
			return;
		if (n.getStart(sf) === pos && ts.isIdentifier(n))
			found = n;
		ts.forEachChild(n, visit);
	};
	visit(sf);
	return found;
}

const isFn = (n) => n && (ts.isFunctionExpression(n) || ts.isArrowFunction(n) || ts.isClassExpression(n));

// the declaration a definition's name belongs to, when it is a callable one
function callableDecl(sf, pos) {
	const id = nodeAt(sf, pos);
	const d = id && id.parent;
	if (!d)
		return null;
	if (ts.isFunctionDeclaration(d) || ts.isMethodDeclaration(d) || ts.isClassDeclaration(d) ||
	    ts.isClassExpression(d) || ts.isFunctionExpression(d))
		return d;
	if ((ts.isVariableDeclaration(d) || ts.isPropertyAssignment(d) || ts.isPropertyDeclaration(d)) &&
	    isFn(d.initializer))
		return d;
	return null;
}

// the line ci's tags give a declaration: its statement's, for `const f = () =>`
function declLine(sf, d) {
	let n = d;
	if (ts.isVariableDeclaration(d) && d.parent && d.parent.parent && ts.isVariableStatement(d.parent.parent))
		n = d.parent.parent;
	return sf.getLineAndCharacterOfPosition(n.getStart(sf, false)).line + 1;
}

const lineOf = (sf, n) => sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1;
const relative = (t) => t.startsWith('./') || t.startsWith('../') || t.startsWith('/');

// a relative module specifier (import ... from, require(), import()) that resolves to no file
function missingModule(spec) {
	if (!spec || !ts.isStringLiteralLike(spec) || !relative(spec.text))
		return false;
	return !program.getTypeChecker().getSymbolAtLocation(spec);
}

// whether the value of expression e comes from a missing repository file: its
// leftmost name is imported from one, or is a variable initialised from such
// a value (d: how many variables were followed)
function fromMissingFile(e, d) {
	for (;;) {
		if (ts.isPropertyAccessExpression(e) || ts.isElementAccessExpression(e) || ts.isCallExpression(e) ||
		    ts.isNewExpression(e) || ts.isParenthesizedExpression(e) || ts.isNonNullExpression(e) ||
		    ts.isAwaitExpression(e) || ts.isAsExpression(e) || ts.isTypeAssertionExpression(e)) {
			if (ts.isCallExpression(e) && (e.expression.kind === ts.SyntaxKind.ImportKeyword ||
			    (ts.isIdentifier(e.expression) && e.expression.text === 'require')))
				return missingModule(e.arguments[0]);
			e = e.expression;
		} else if (ts.isTypeReferenceNode(e)) {
			e = e.typeName;
		} else if (ts.isQualifiedName(e)) {
			e = e.left;
		} else {
			break;
		}
	}
	if (!ts.isIdentifier(e) || d > 4)
		return false;
	const sym = program.getTypeChecker().getSymbolAtLocation(e);
	for (const decl of (sym && sym.declarations) || []) {
		let n = decl;
		while (n && !ts.isImportDeclaration(n) && !ts.isImportEqualsDeclaration(n) && !ts.isSourceFile(n) &&
		       (ts.isImportSpecifier(n) || ts.isNamedImports(n) || ts.isNamespaceImport(n) || ts.isImportClause(n)))
			n = n.parent;
		if (ts.isImportDeclaration(n))
			return missingModule(n.moduleSpecifier);
		if (ts.isImportEqualsDeclaration(n))
			return ts.isExternalModuleReference(n.moduleReference) && missingModule(n.moduleReference.expression);
		if (ts.isVariableDeclaration(n) && n.initializer && ts.isIdentifier(n.name))
			return fromMissingFile(n.type || n.initializer, d + 1);
		if (ts.isBindingElement(n)) {
			let v = n.parent;
			while (v && (ts.isObjectBindingPattern(v) || ts.isArrayBindingPattern(v) || ts.isBindingElement(v)))
				v = v.parent;
			return !!(v && ts.isVariableDeclaration(v) && v.initializer && fromMissingFile(v.initializer, d + 1));
		}
	}
	return false;
}

const edges = new Set();
const skips = new Set();
for (const f of files) {
	const sf = program.getSourceFile(abs(f));
	if (!sf)
		continue;
	const visit = (n) => {
		if (ts.isCallExpression(n) || ts.isNewExpression(n)) {
			let e = n.expression;
			while (ts.isParenthesizedExpression(e) || ts.isNonNullExpression(e))
				e = e.expression;
			const name = ts.isIdentifier(e) ? e : ts.isPropertyAccessExpression(e) ? e.name : null;
			if (name && ts.isIdentifier(name) && !edge(f, sf, name) && fromMissingFile(e, 0))
				skips.add(JSON.stringify({ path: f, skip_from: lineOf(sf, name), skip_to: lineOf(sf, name) }));
		}
		ts.forEachChild(n, visit);
	};
	visit(sf);
}

function edge(f, sf, name) {
	const pos = name.getStart(sf);
	let defs;
	try {
		defs = service.getDefinitionAtPosition(abs(f), pos) || [];
	} catch (err) {
		return false;
	}
	const line = sf.getLineAndCharacterOfPosition(pos).line + 1;
	const found = [];
	for (const d of defs) {
		const rel = path.relative(root, d.fileName);
		if (!fileset.has(rel))
			continue;
		const dsf = program.getSourceFile(d.fileName);
		const decl = dsf && callableDecl(dsf, d.textSpan.start);
		if (decl)
			found.push({ rel, decl, dsf });
	}
	// an overloaded function or method (the call resolves to a signature): its implementation
	const checker = program.getTypeChecker();
	for (const x of found) {
		const kind = ts.isFunctionDeclaration(x.decl) ? ts.isFunctionDeclaration :
			ts.isMethodDeclaration(x.decl) ? ts.isMethodDeclaration : null;
		if (kind && !x.decl.body && x.decl.name) {
			const sym = checker.getSymbolAtLocation(x.decl.name);
			const impl = sym && (sym.declarations || []).find((d) => kind(d) && d.body &&
				d.getSourceFile() === x.dsf);
			if (impl)
				x.decl = impl;
		}
	}
	// a declaration without a body (an abstract method, `declare function`) is no function to call
	const bodies = found.filter((x) => !ts.isFunctionLike(x.decl) || x.decl.body);
	for (const x of bodies)
		edges.add(JSON.stringify({ path: f, line, def_path: x.rel, def_line: declLine(x.dsf, x.decl) }));
	return bodies.length > 0;
}

// a line is skipped only where no call on it has an edge
const resolved = new Set([...edges].map((s) => { const x = JSON.parse(s); return x.path + ':' + x.line; }));
const out = [...edges, ...[...skips].filter((s) => { const x = JSON.parse(s); return !resolved.has(x.path + ':' + x.skip_from); })];
process.stdout.write(out.sort().map((s) => s + '\n').join(''));
