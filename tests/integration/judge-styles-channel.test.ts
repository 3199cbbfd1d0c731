import { describeStyles, type Style } from "./helpers/styles";

// Honest styles beyond plain functions that the judge carries (they used to fail in the judge and
// pass in-process, pushing tasks into the forgeable mode): operators between the candidate's own
// objects, handle identity, copy-back of standard containers, exceptions with args and attributes,
// test-module callbacks, big integers, dict views, aware datetimes, tmp_path files, big answers,
// environment variables the test sets, signatures, objects of the test module's own classes
// (their data, methods, class attributes and dataclass behaviour).

const STYLES: Style[] = [
  {
    name: "operators, hashing, truth, format and with on the candidate's own objects; one proxy per handle",
    main: "class Money:\n    def __init__(self, cents):\n        self.cents = cents\n    def __eq__(self, other):\n        return isinstance(other, Money) and self.cents == other.cents\n    def __lt__(self, other):\n        return self.cents < other.cents\n    def __add__(self, other):\n        return Money(self.cents + other.cents)\n    def __hash__(self):\n        return hash(self.cents)\n    def __bool__(self):\n        return self.cents != 0\n    def __format__(self, spec):\n        return format(self.cents / 100, spec)\n\nclass Ledger:\n    def __init__(self):\n        self.entries = []\n        self.open = False\n    def add(self, m):\n        self.entries.append(m.cents)\n        return self\n    def __enter__(self):\n        self.open = True\n        return self\n    def __exit__(self, *exc):\n        self.open = False\n        return False\n",
    buggy:
      "class Money:\n    def __init__(self, cents):\n        self.cents = cents\n    def __eq__(self, other):\n        return isinstance(other, Money) and self.cents == other.cents\n    def __lt__(self, other):\n        return self.cents > other.cents\n    def __add__(self, other):\n        return Money(self.cents - other.cents)\n    def __hash__(self):\n        return 0\n    def __bool__(self):\n        return True\n    def __format__(self, spec):\n        return format(self.cents, spec)\n\nclass Ledger:\n    def __init__(self):\n        self.entries = []\n        self.open = False\n    def add(self, m):\n        self.entries.append(m.cents)\n        return Ledger()\n    def __enter__(self):\n        return None\n    def __exit__(self, *exc):\n        return False\n",
    tests:
      'from solution import Money, Ledger\n\ndef test_compare_and_add():\n    a, b = Money(150), Money(250)\n    assert a + b == Money(400) and a < b and sorted([b, a]) == [a, b]\n    assert len({Money(1), Money(1)}) == 1\n\ndef test_truth_and_format():\n    assert Money(5) and not Money(0)\n    assert f"{Money(1234):.2f}" == "12.34"\n\ndef test_identity_and_with():\n    led = Ledger()\n    assert led.add(Money(1)) is led\n    with led as inside:\n        assert inside is led and led.open\n    assert not led.open and led.entries == [1]\n',
  },
  {
    name: "deque, Counter, OrderedDict, defaultdict and bytearray mutated in place",
    main: 'def rotate(d):\n    d.rotate(1)\n\ndef tally(c, word):\n    c.update(word)\n\ndef touch(od, key):\n    od.move_to_end(key)\n\ndef group(dd, pairs):\n    for k, v in pairs:\n        dd[k].append(v)\n\ndef pad(buf):\n    buf.extend(b"==")\n',
    buggy:
      'def rotate(d):\n    d.rotate(-1)\n\ndef tally(c, word):\n    c.update(word[1:])\n\ndef touch(od, key):\n    od.move_to_end(key, last=False)\n\ndef group(dd, pairs):\n    for k, v in pairs[1:]:\n        dd[k].append(v)\n\ndef pad(buf):\n    buf.extend(b"=")\n',
    tests:
      'import collections\nfrom solution import rotate, tally, touch, group, pad\n\ndef test_in_place():\n    d = collections.deque([1, 2, 3])\n    rotate(d)\n    assert d == collections.deque([3, 1, 2])\n    c = collections.Counter("ab")\n    tally(c, "aa")\n    assert c["a"] == 3\n    od = collections.OrderedDict(a=1, b=2)\n    touch(od, "a")\n    assert list(od) == ["b", "a"]\n    dd = collections.defaultdict(list)\n    group(dd, [("x", 1), ("x", 2)])\n    assert dd["x"] == [1, 2]\n    buf = bytearray(b"ab")\n    pad(buf)\n    assert buf == bytearray(b"ab==")\n',
  },
  {
    name: "exceptions with args and attributes; a test-module function as a callback",
    main: 'class ValidationError(ValueError):\n    def __init__(self, field, code):\n        super().__init__(field, code)\n        self.field = field\n        self.code = code\n\ndef validate(record):\n    if "age" not in record:\n        raise ValidationError("age", 422)\n    return record\n\ndef lookup(d, k):\n    return d[k]\n\ndef apply_all(fn, xs):\n    return [fn(x) for x in xs]\n',
    buggy:
      'class ValidationError(ValueError):\n    def __init__(self, field, code):\n        super().__init__(field, code)\n        self.field = field\n        self.code = code\n\ndef validate(record):\n    if "age" not in record:\n        raise ValidationError("name", 400)\n    return record\n\ndef lookup(d, k):\n    return d.get(k)\n\ndef apply_all(fn, xs):\n    return [fn(x) for x in xs[:-1]]\n',
    tests:
      'import pytest\nimport solution\nfrom solution import validate, lookup, apply_all\n\ndef test_error_attributes():\n    with pytest.raises(solution.ValidationError) as e:\n        validate({})\n    assert e.value.field == "age" and e.value.code == 422 and e.value.args == ("age", 422)\n\ndef test_key_error_args():\n    with pytest.raises(KeyError) as e:\n        lookup({}, "k")\n    assert e.value.args[0] == "k"\n\ndef triple(x):\n    return 3 * x\n\ndef test_module_function_callback():\n    assert apply_all(triple, [1, 2]) == [3, 6]\n',
  },
  {
    name: "big integers, dict views, aware datetimes and tmp_path files",
    main: "import datetime\n\ndef fact(n):\n    out = 1\n    for i in range(2, n + 1):\n        out *= i\n    return out\n\ndef names(d):\n    return d.keys()\n\ndef next_hour(t):\n    return t + datetime.timedelta(hours=1)\n\ndef count_words(path, out):\n    words = len(path.read_text().split())\n    out.write_text(str(words))\n    return words\n",
    buggy:
      "import datetime\n\ndef fact(n):\n    out = 1\n    for i in range(2, n):\n        out *= i\n    return out\n\ndef names(d):\n    return list(d.values())\n\ndef next_hour(t):\n    return t.replace(tzinfo=None) + datetime.timedelta(hours=1)\n\ndef count_words(path, out):\n    words = len(path.read_text().split()) - 1\n    out.write_text(str(words))\n    return words\n",
    tests:
      'import datetime, math\nfrom solution import fact, names, next_hour, count_words\n\ndef test_big():\n    assert fact(3000) == math.factorial(3000)\n\ndef test_keys():\n    assert names({"a": 1, "b": 2}) == {"a", "b"}\n\ndef test_aware():\n    t = datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc)\n    assert next_hour(t) == datetime.datetime(2024, 1, 1, 1, tzinfo=datetime.timezone.utc)\n\ndef test_files(tmp_path):\n    src = tmp_path / "in.txt"\n    src.write_text("one two three")\n    out = tmp_path / "out.txt"\n    assert count_words(src, out) == 3\n    assert out.read_text() == "3"\n',
  },
  {
    name: "an answer over one 16 MiB frame",
    main: 'def blob(n):\n    return "ab" * n\n',
    buggy: 'def blob(n):\n    return "ab" * (n - 1)\n',
    tests:
      'from solution import blob\n\ndef test_big_answer():\n    s = blob(10_000_000)\n    assert len(s) == 20_000_000 and s[:4] == "abab"\n',
  },
  {
    name: "an environment variable the test sets (monkeypatch.setenv) and an inspect.signature",
    main: "import os\n\ndef greet(name):\n    return f\"{os.environ.get('GREETING', 'hello')} {name}\"\n\ndef area(width, height=1):\n    return width * height\n",
    buggy: 'def greet(name):\n    return f"hello {name}"\n\ndef area(width, height=2):\n    return width * height\n',
    tests:
      'import inspect\nfrom solution import greet, area\n\ndef test_env(monkeypatch):\n    monkeypatch.setenv("GREETING", "hola")\n    assert greet("world") == "hola world"\n\ndef test_env_undone():\n    assert greet("world") == "hello world"\n\ndef test_signature():\n    assert str(inspect.signature(area)) == "(width, height=1)"\n',
  },
  {
    name: "objects of a class the test module defines, read and changed by the candidate",
    main: "def reverse(head):\n    prev = None\n    while head is not None:\n        head.next, prev, head = prev, head, head.next\n    return prev\n\ndef depth(tree):\n    if tree is None:\n        return 0\n    return 1 + max(depth(tree.left), depth(tree.right))\n\ndef label(tree, prefix):\n    if tree is not None:\n        tree.name = prefix + str(tree.val)\n        label(tree.left, prefix)\n        label(tree.right, prefix)\n",
    buggy:
      "def reverse(head):\n    prev = None\n    while head is not None and head.next is not None:\n        head.next, prev, head = prev, head, head.next\n    return prev\n\ndef depth(tree):\n    if tree is None:\n        return 0\n    return 1 + depth(tree.left)\n\ndef label(tree, prefix):\n    if tree is not None:\n        tree.name = prefix\n",
    tests:
      'from solution import reverse, depth, label\n\nclass Node:\n    def __init__(self, val, next=None):\n        self.val, self.next = val, next\n\nclass Tree:\n    def __init__(self, val, left=None, right=None):\n        self.val, self.left, self.right, self.name = val, left, right, ""\n\n    def names(self):\n        return [self.name] + (self.left.names() if self.left else []) + (self.right.names() if self.right else [])\n\ndef test_linked_list_reversed_in_place():\n    n1 = Node(1)\n    n2 = Node(2, n1)\n    n3 = Node(3, n2)\n    assert reverse(n3) is n1 and n1.next is n2 and n2.next is n3 and n3.next is None\n\ndef test_tree_read_and_labelled():\n    t = Tree(1, Tree(2, None, Tree(4)), Tree(3))\n    assert depth(t) == 3\n    label(t, "n")\n    assert t.names() == ["n1", "n2", "n4", "n3"]\n',
  },
  {
    name: "methods, class attributes and dataclass behaviour of the test module's classes, used by the candidate",
    main: "def route(graph, start, goal):\n    seen, todo = {start}, [[start]]\n    while todo:\n        path = todo.pop(0)\n        if path[-1] == goal:\n            return path\n        for n in graph.neighbours(path[-1]):\n            if n not in seen:\n                seen.add(n)\n                todo.append(path + [n])\n    return None\n\ndef cost(graph, path):\n    return sum(graph.weight(a, b) for a, b in zip(path, path[1:])) * type(graph).SCALE\n\ndef nearest(points, origin):\n    return min(points, key=origin.distance)\n\ndef moved(p):\n    return type(p)(p.x + 1, p.y)\n",
    buggy:
      "def route(graph, start, goal):\n    seen, todo = {start}, [[start]]\n    while todo:\n        path = todo.pop()\n        if path[-1] == goal:\n            return path\n        for n in graph.neighbours(path[-1]):\n            if n not in seen:\n                seen.add(n)\n                todo.append(path + [n])\n    return None\n\ndef cost(graph, path):\n    return sum(graph.weight(a, b) for a, b in zip(path, path[1:])) \n\ndef nearest(points, origin):\n    return max(points, key=origin.distance)\n\ndef moved(p):\n    return type(p)(p.x, p.y + 1)\n",
    tests:
      "import math\nfrom dataclasses import dataclass\nfrom solution import route, cost, nearest, moved\n\nclass Graph:\n    SCALE = 10\n\n    def __init__(self, edges):\n        self.edges = edges\n\n    def neighbours(self, n):\n        return sorted(b for a, b in self.edges if a == n)\n\n    def weight(self, a, b):\n        return 2 if (a, b) in self.edges else math.inf\n\n@dataclass(frozen=True)\nclass Point:\n    x: float\n    y: float = 0.0\n\n    def distance(self, other):\n        return math.hypot(self.x - other.x, self.y - other.y)\n\ndef test_methods_and_class_attributes_of_the_tests_classes():\n    g = Graph({(1, 2), (2, 3), (1, 4), (4, 5), (5, 3)})\n    assert route(g, 1, 3) == [1, 2, 3]\n    assert cost(g, [1, 2, 3]) == 40\n\ndef test_a_dataclass_of_the_tests():\n    o = Point(0, 0)\n    assert nearest([Point(3, 4), Point(1, 1), Point(-5, 0)], o) == Point(1, 1)\n    assert moved(Point(1, 2)) == Point(2, 2)\n",
  },
];

describeStyles("channel styles in the isolated judge", "chstyle", STYLES);
