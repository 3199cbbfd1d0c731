"""Objects of classes the test module defines, handed to the candidate: it reads and sets their
instance attributes as it would in-process (linked lists, trees built by the test), identity and
in-place changes come back, and the class crosses as a description rebuilt in the candidate
(tests/test_channel_test_classes.py), never the test module's other globals.
The positive control is the same judge without the test module named: such objects stay opaque
and the style fails (as it did before test-module objects crossed by value)."""

import pytest
from pair import Pair

SECRET = "expected answers of the hidden test"


class Node:
    hidden = SECRET  # class-level data of the test module: never sent

    def __init__(self, val, next=None):
        self.val, self.next = val, next

    def answer(self):
        return SECRET


class TestLike:
    """Named like a pytest test class: its instances (a test's `self`) stay opaque."""

    __test__ = False

    def __init__(self):
        self.data = SECRET


def candidate_names():
    def reverse(head):
        prev = None
        while head is not None:
            head.next, prev, head = prev, head, head.next
        return prev

    def values(head):
        out = []
        while head is not None:
            out.append(head.val)
            head = head.next
        return out

    def relabel(node, val):
        node.val = val
        node.extra = "set by the candidate"
        return node

    def copy_node(node):
        import copy

        return copy.copy(node)

    def peek(obj, name):
        return getattr(obj, name)

    def same_class(a, b):
        return type(a) is type(b) and type(a).__name__

    def shadow(node):
        node.answer = lambda: "forged"
        return node

    return {
        "reverse": reverse,
        "values": values,
        "relabel": relabel,
        "copy_node": copy_node,
        "peek": peek,
        "same_class": same_class,
        "shadow": shadow,
    }


@pytest.fixture
def judge():
    pair = Pair(candidate_names(), test_modules=frozenset({__name__}))
    yield pair
    pair.close()


def chain(*vals):
    head = None
    for v in reversed(vals):
        head = Node(v, head)
    return head


def test_positive_control_without_the_rule_the_style_fails():
    pair = Pair(candidate_names())  # no test module named: the judge's objects are opaque
    try:
        assert candidate_names()["values"](chain(1, 2)) == [1, 2]  # in-process
        with pytest.raises(PermissionError, match="opaque"):
            pair("values")(chain(1, 2))
    finally:
        pair.close()


def test_the_candidate_reads_a_linked_list_of_the_tests_nodes(judge):
    assert judge("values")(chain(1, 2, 3)) == [1, 2, 3]
    assert judge("same_class")(Node(1), Node(2)) == "Node"


def test_reversed_in_place_and_checked_by_identity(judge):
    n1 = Node(1)
    n2 = Node(2, n1)
    n3 = Node(3, n2)
    head = judge("reverse")(n3)
    assert head is n1 and n1.next is n2 and n2.next is n3 and n3.next is None
    assert type(head) is Node and head.answer() == SECRET  # the judge's own class and methods


def test_attributes_set_by_the_candidate_come_back(judge):
    node = Node(1)
    assert judge("relabel")(node, 7) is node
    assert node.val == 7 and node.extra == "set by the candidate"
    fresh = judge("copy_node")(node)
    assert type(fresh) is Node and fresh is not node and fresh.val == 7  # rebuilt with the test's class


def test_the_class_crosses_but_not_the_test_modules_globals(judge):
    assert candidate_names()["peek"](Node(1), "hidden") == SECRET, "positive control: in-process it is there"
    assert judge("peek")(Node(1), "hidden") == SECRET  # a class attribute, plain data: by value
    with pytest.raises(NameError, match="SECRET"):
        judge("peek")(Node(1), "answer")()  # the method crossed as source; the module's SECRET did not
    with pytest.raises(PermissionError, match="opaque"):
        judge("peek")(TestLike(), "data")  # a test class's instance stays opaque


def test_behaviour_of_the_class_is_never_hidden(judge):
    node = Node(1)
    with pytest.raises(Exception, match="hide behaviour"):
        judge("shadow")(node)
    assert node.answer() == SECRET
