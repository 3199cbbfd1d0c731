import { describeStyles, type Style } from "./helpers/styles";

// Tasks in the styles of HumanEval, MBPP and QuixBugs grade in the isolated judge: node graphs
// with cycles defined in a support file, generators, in-place sorts, classes the candidate
// defines, callbacks, exceptions, printed output, floats. For each: the reference passes, the
// buggy file fails, in the judge (no in-process fallback).

const STYLES: Style[] = [
  {
    name: "QuixBugs: a graph of Node objects from a support file, with a cycle",
    support: [
      {
        path: "node.py",
        content:
          "class Node:\n    def __init__(self, value=None, successors=None):\n        self.value = value\n        self.successors = successors or []\n",
      },
    ],
    main: "def reachable(start, goal):\n    seen, todo = set(), [start]\n    while todo:\n        n = todo.pop()\n        if n is goal:\n            return True\n        if id(n) in seen:\n            continue\n        seen.add(id(n))\n        todo.extend(n.successors)\n    return False\n\ndef values(start):\n    out, seen, todo = [], set(), [start]\n    while todo:\n        n = todo.pop(0)\n        if id(n) in seen:\n            continue\n        seen.add(id(n))\n        out.append(n.value)\n        todo.extend(n.successors)\n    return out\n",
    buggy: "def reachable(start, goal):\n    return start is goal\n\ndef values(start):\n    return [start.value]\n",
    tests:
      "from node import Node\nfrom solution import values\n\ndef test_cycle_values():\n    a, b, c = Node('a'), Node('b'), Node('c')\n    a.successors = [b]\n    b.successors = [c]\n    c.successors = [a]\n    assert values(a) == ['a', 'b', 'c']\n",
  },
  {
    name: "QuixBugs: a linked list reversed in place and checked by identity, identity across arguments",
    support: [
      {
        path: "node.py",
        content:
          "class Node:\n    def __init__(self, value=None, successor=None):\n        self.value = value\n        self.successor = successor\n",
      },
    ],
    main: "def reverse_linked_list(node):\n    prevnode = None\n    while node:\n        nextnode = node.successor\n        node.successor = prevnode\n        prevnode = node\n        node = nextnode\n    return prevnode\n\ndef find(head, target):\n    while head is not None and head is not target:\n        head = head.successor\n    return head\n",
    buggy:
      "def reverse_linked_list(node):\n    prevnode = None\n    while node:\n        nextnode = node.successor\n        node.successor = prevnode\n        node = nextnode\n    return prevnode\n\ndef find(head, target):\n    while head is not None and head.value != target.value:\n        head = head.successor\n    return head\n",
    tests:
      "from node import Node\nfrom solution import reverse_linked_list, find\n\ndef test_reverse():\n    node1 = Node(1)\n    node2 = Node(2, node1)\n    node3 = Node(3, node2)\n    result = reverse_linked_list(node3)\n    assert result == node1\n    out = []\n    while result:\n        out.append(result.value)\n        result = result.successor\n    assert out == [1, 2, 3]\n    assert node3.successor is None and node1.successor is node2\n\ndef test_identity_across_arguments():\n    a = Node(1)\n    b = Node(1, a)\n    c = Node(2, b)\n    assert find(c, a) is a\n",
  },
  {
    name: "long generators and long chains of support-file objects, a literal __all__",
    support: [
      {
        path: "node.py",
        content:
          "class Node:\n    def __init__(self, value, nxt=None):\n        self.value = value\n        self.nxt = nxt\n",
      },
    ],
    main: "__all__ = ['squares', 'length']\n\ndef squares(n):\n    for i in range(n):\n        yield i * i\n\ndef length(head):\n    n = 0\n    while head is not None:\n        n += 1\n        head = head.nxt\n    return n\n\ndef helper():\n    return 1\n",
    buggy:
      "__all__ = ['squares', 'length']\n\ndef squares(n):\n    for i in range(1, n):\n        yield i * i\n\ndef length(head):\n    return 0 if head is None else 1\n\ndef helper():\n    return 1\n",
    tests:
      "from node import Node\nfrom solution import *  # noqa\n\ndef test_long_generator():\n    assert sum(squares(50000)) == sum(i * i for i in range(50000))\n\ndef test_long_chain():\n    head = None\n    for i in range(1500):\n        head = Node(i, head)\n    assert length(head) == 1500\n\ndef test_all_decides_the_star_import():\n    assert 'helper' not in globals()\n",
  },
  {
    name: "task files named like the grader's own modules (judge.py, wire.py, peer.py)",
    support: [
      { path: "wire.py", content: "SCALE = 3\n" },
      { path: "peer.py", content: "def neighbour(x):\n    return x + 1\n" },
    ],
    main: "from wire import SCALE\nfrom peer import neighbour\n\ndef judge(x):\n    return neighbour(x) * SCALE\n",
    buggy: "from wire import SCALE\nfrom peer import neighbour\n\ndef judge(x):\n    return x * SCALE\n",
    tests:
      "import wire\nfrom solution import judge\n\ndef test_judge():\n    assert wire.SCALE == 3\n    assert judge(1) == 6\n",
  },
  {
    name: "generators consumed lazily, infinite ones too",
    main: "def naturals():\n    n = 0\n    while True:\n        yield n\n        n += 1\n\ndef pairs(xs):\n    for i, x in enumerate(xs):\n        yield (i, x)\n",
    buggy:
      "def naturals():\n    n = 1\n    while True:\n        yield n\n        n += 1\n\ndef pairs(xs):\n    for i, x in enumerate(xs):\n        yield (x, i)\n",
    tests:
      "import itertools\nfrom solution import naturals, pairs\n\ndef test_first():\n    assert list(itertools.islice(naturals(), 4)) == [0, 1, 2, 3]\n\ndef test_pairs():\n    g = pairs('ab')\n    assert next(g) == (0, 'a')\n    assert list(g) == [(1, 'b')]\n",
  },
  {
    name: "in-place sorts and mutated arguments",
    main: "def bubble(xs):\n    for i in range(len(xs)):\n        for j in range(len(xs) - 1 - i):\n            if xs[j] > xs[j + 1]:\n                xs[j], xs[j + 1] = xs[j + 1], xs[j]\n\ndef add_key(d, k):\n    d[k] = len(d)\n    return None\n",
    buggy:
      "def bubble(xs):\n    for i in range(len(xs) - 1):\n        if xs[i] > xs[i + 1]:\n            xs[i], xs[i + 1] = xs[i + 1], xs[i]\n\ndef add_key(d, k):\n    d[k] = 0\n",
    tests:
      "from solution import bubble, add_key\n\ndef test_sort():\n    xs = [3, 1, 2, 0]\n    inner = [xs]\n    assert bubble(xs) is None\n    assert xs == [0, 1, 2, 3] and inner[0] is xs\n\ndef test_dict():\n    d = {'a': 0}\n    add_key(d, 'b')\n    assert d == {'a': 0, 'b': 1}\n",
  },
  {
    name: "a class the candidate defines, used through its methods",
    main: "class Stack:\n    def __init__(self):\n        self.items = []\n    def push(self, x):\n        self.items.append(x)\n    def pop(self):\n        return self.items.pop()\n    def __len__(self):\n        return len(self.items)\n",
    buggy:
      "class Stack:\n    def __init__(self):\n        self.items = []\n    def push(self, x):\n        self.items.insert(0, x)\n    def pop(self):\n        return self.items.pop()\n    def __len__(self):\n        return len(self.items)\n",
    tests:
      "from solution import Stack\n\ndef test_lifo():\n    s = Stack()\n    s.push(1)\n    s.push(2)\n    assert isinstance(s, Stack) and not isinstance([1], Stack)\n    assert len(s) == 2\n    assert s.pop() == 2\n    assert s.items == [1]\n",
  },
  {
    name: "callbacks, builtin and candidate-defined exceptions, printed output, floats and dicts with tuple keys",
    main: "import math\n\nclass InputError(ValueError):\n    pass\n\nclass BadInput(InputError):\n    pass\n\ndef checked(s):\n    if not s:\n        raise BadInput('empty input')\n    return s\n\ndef apply(fn, xs):\n    return [fn(x) for x in xs]\n\ndef parse(s):\n    if not s.isdigit():\n        raise ValueError(f'not a number: {s}')\n    return int(s)\n\ndef shout(s):\n    print(s.upper())\n\ndef hyp(a, b):\n    return math.sqrt(a * a + b * b)\n\ndef grid(n):\n    return {(i, j): i * j for i in range(n) for j in range(n)}\n",
    buggy:
      "import math\n\nclass InputError(ValueError):\n    pass\n\nclass BadInput(InputError):\n    pass\n\ndef checked(s):\n    return s\n\ndef apply(fn, xs):\n    return [fn(x) for x in xs[1:]]\n\ndef parse(s):\n    return int(s)\n\ndef shout(s):\n    print(s)\n\ndef hyp(a, b):\n    return a + b\n\ndef grid(n):\n    return {}\n",
    tests:
      "import pytest\nimport solution\nfrom solution import *  # noqa\n\ndef test_custom_exception():\n    with pytest.raises(solution.BadInput, match='empty'):\n        checked('')\n    with pytest.raises(ValueError):\n        checked('')\n    assert issubclass(solution.BadInput, solution.InputError)\n\ndef test_apply():\n    assert apply(lambda x: x * 10, [1, 2]) == [10, 20]\n\ndef test_raises():\n    with pytest.raises(ValueError, match='not a number'):\n        parse('x1')\n\ndef test_print(capsys):\n    shout('hi')\n    assert capsys.readouterr().out == 'HI\\n'\n\ndef test_float():\n    assert math.isclose(hyp(3, 4), 5.0)\n\ndef test_grid():\n    assert grid(2)[(1, 1)] == 1\n",
  },
];

describeStyles("task styles in the isolated judge", "style", STYLES);
