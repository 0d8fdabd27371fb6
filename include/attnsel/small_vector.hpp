// A vector that keeps its first N elements inside itself: a selection's few slots, page constraints
// and trace steps cost no heap allocation. Past N it moves to the heap like std::vector.
#pragma once

#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace attnsel {

template <class T, std::size_t N>
class SmallVector {
  static_assert(N > 0, "SmallVector needs room for one element");
  static_assert(alignof(T) <= alignof(std::max_align_t), "over-aligned elements are not supported");

 public:
  using value_type = T;
  using size_type = std::size_t;
  using difference_type = std::ptrdiff_t;
  using reference = T&;
  using const_reference = const T&;
  using pointer = T*;
  using const_pointer = const T*;
  using iterator = T*;
  using const_iterator = const T*;

  SmallVector() noexcept = default;
  SmallVector(std::initializer_list<T> values) { assign(values.begin(), values.end()); }
  SmallVector(const SmallVector& other) { assign(other.begin(), other.end()); }
  SmallVector(SmallVector&& other) noexcept(std::is_nothrow_move_constructible_v<T>) { take(std::move(other)); }
  SmallVector& operator=(const SmallVector& other) {
    if (this != &other) {
      clear();
      assign(other.begin(), other.end());
    }
    return *this;
  }
  SmallVector& operator=(SmallVector&& other) noexcept(std::is_nothrow_move_constructible_v<T>) {
    if (this != &other) {
      clear();
      release();
      take(std::move(other));
    }
    return *this;
  }
  ~SmallVector() {
    clear();
    release();
  }

  iterator begin() noexcept { return data_; }
  iterator end() noexcept { return data_ + size_; }
  const_iterator begin() const noexcept { return data_; }
  const_iterator end() const noexcept { return data_ + size_; }
  const_iterator cbegin() const noexcept { return data_; }
  const_iterator cend() const noexcept { return data_ + size_; }

  size_type size() const noexcept { return size_; }
  size_type capacity() const noexcept { return capacity_; }
  bool empty() const noexcept { return size_ == 0; }
  T* data() noexcept { return data_; }
  const T* data() const noexcept { return data_; }

  T& operator[](size_type i) { return data_[i]; }
  const T& operator[](size_type i) const { return data_[i]; }
  T& front() { return data_[0]; }
  const T& front() const { return data_[0]; }
  T& back() { return data_[size_ - 1]; }
  const T& back() const { return data_[size_ - 1]; }

  void reserve(size_type n) {
    if (n > capacity_) grow_to(n);
  }
  void push_back(const T& v) { emplace_back(v); }
  void push_back(T&& v) { emplace_back(std::move(v)); }
  template <class... Args>
  T& emplace_back(Args&&... args) {
    if (size_ == capacity_) {
      T value(std::forward<Args>(args)...);  // args may refer into this vector
      grow_to(capacity_ * 2);
      ::new (static_cast<void*>(data_ + size_)) T(std::move(value));
    } else {
      ::new (static_cast<void*>(data_ + size_)) T(std::forward<Args>(args)...);
    }
    return data_[size_++];
  }
  void pop_back() { data_[--size_].~T(); }
  void clear() noexcept {
    std::destroy(data_, data_ + size_);
    size_ = 0;
  }

  iterator insert(const_iterator pos, const T& v) {
    const size_type at = static_cast<size_type>(pos - data_);
    T value(v);
    emplace_back(std::move(value));
    std::rotate(data_ + at, data_ + size_ - 1, data_ + size_);
    return data_ + at;
  }
  iterator erase(const_iterator first, const_iterator last) {
    T* f = data_ + (first - data_);
    T* l = data_ + (last - data_);
    T* new_end = std::move(l, end(), f);
    std::destroy(new_end, end());
    size_ = static_cast<size_type>(new_end - data_);
    return f;
  }
  iterator erase(const_iterator pos) { return erase(pos, pos + 1); }

  friend bool operator==(const SmallVector& a, const SmallVector& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }
  friend bool operator!=(const SmallVector& a, const SmallVector& b) { return !(a == b); }

 private:
  bool on_heap() const noexcept { return data_ != inline_data(); }
  T* inline_data() noexcept { return reinterpret_cast<T*>(inline_); }
  const T* inline_data() const noexcept { return reinterpret_cast<const T*>(inline_); }

  template <class It>
  void assign(It first, It last) {
    reserve(static_cast<size_type>(std::distance(first, last)));
    for (; first != last; ++first) emplace_back(*first);
  }

  void grow_to(size_type n) {
    T* heap = static_cast<T*>(::operator new(n * sizeof(T)));
    std::uninitialized_move(data_, data_ + size_, heap);
    std::destroy(data_, data_ + size_);
    release();
    data_ = heap;
    capacity_ = n;
  }

  void release() noexcept {
    if (on_heap()) ::operator delete(data_);
    data_ = inline_data();
    capacity_ = N;
  }

  // Steals other's heap buffer, or moves its inline elements; leaves other empty and inline.
  void take(SmallVector&& other) {
    if (other.on_heap()) {
      data_ = other.data_;
      size_ = other.size_;
      capacity_ = other.capacity_;
      other.data_ = other.inline_data();
      other.size_ = 0;
      other.capacity_ = N;
      return;
    }
    std::uninitialized_move(other.begin(), other.end(), data_);
    size_ = other.size_;
    other.clear();
  }

  T* data_ = inline_data();
  size_type size_ = 0;
  size_type capacity_ = N;
  alignas(T) unsigned char inline_[N * sizeof(T)];
};

}  // namespace attnsel
