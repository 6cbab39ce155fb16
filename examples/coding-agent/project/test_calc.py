import unittest

from calc import add, double


class CalcTest(unittest.TestCase):
    def test_add(self) -> None:
        self.assertEqual(add(2, 3), 5)

    def test_double(self) -> None:
        self.assertEqual(double(4), 8)


if __name__ == "__main__":
    unittest.main()
