# sprof fixture: the Ruby that fixture.c pretends Spinel compiled.
class Shape
  def area
    @w * @h
  end
end

class Vec2
  def +(other)
    Vec2.new(@x + other.x, @y + other.y)
  end

  def len2
    @x * @x + @y * @y
  end
end

module Geo
  class Box
    def self.make(n)
      Box.new(n)
    end
  end

  def self.dist2(a, b)
    (a - b) * (a - b)
  end
end

def fib(n)
  n < 2 ? n : fib(n - 1) + fib(n - 2)
end

def scale(v)
  v * 3
end

def run(n)
  total = scale(n)
  adder = ->(x) { x + total }
  total += adder.call(n)
  total += scale(total)
  total
end

puts run(fib(20))

def pump(n)
  f = Fiber.new { Fiber.yield n * 2 }
  f.resume
end
